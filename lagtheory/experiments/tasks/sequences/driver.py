"""The shared driver of the two real-valued sequence tasks, single-location
regression (:mod:`lagtheory.experiments.tasks.sequences.regression`) and in-context linear
regression (:mod:`lagtheory.experiments.tasks.sequences.icl`).

Both draw padded batches of sequences whose sizes (sequence lengths, context
sizes) are uniform on a training range, train on the squared loss
``(prediction - target)^2`` and are tested on fixed held-out batches of single
sizes far beyond it; a run's test loss is its test mean squared error averaged
over the test sizes above the training range (the protocol of Deletang et
al., ICLR 2023). :class:`SequenceRegression` implements the engine task
(:mod:`lagtheory.experiments.engine.cells`) once for both: a subclass supplies the
parameters, the sampler of one seed's batch and the prediction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer

from ...engine.cells import seed_rng
from ...parameters import fill_doc


@dataclass(frozen=True)
class SequenceSetting:
    """Training sizes uniform on ``train_min..train_max``; ``test_size`` held-out sequences of each of
    ``test_sizes``, drawn from ``seed_rng(test_seed, size)``.

    Attributes
    ----------
    train_min : int
        The smallest training size, >= 1.
    train_max : int
        The largest training size, >= ``train_min``.
    test_sizes : tuple of int
        Strictly increasing sizes >= 1, the largest above ``train_max``.
    test_size : int
        Held-out sequences per test size, >= 1.
    test_seed : int
        Seeds the held-out batches, >= 0.

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer.
    """

    train_min: int
    train_max: int
    test_sizes: tuple[int, ...]
    test_size: int
    test_seed: int

    def __post_init__(self) -> None:
        check_integer(self.train_min, "train_min", 1)
        check_integer(self.train_max, "train_max", self.train_min)
        check_integer(self.test_size, "test_size", 1)
        check_integer(self.test_seed, "test_seed", 0)
        sizes = self.test_sizes
        if not sizes or list(sizes) != sorted(set(sizes)) or min(sizes) < 1:
            raise ValueError("test_sizes must be a non-empty strictly increasing tuple of sizes >= 1")
        if max(sizes) <= self.train_max:
            raise ValueError(f"test_sizes must reach beyond the training range (train_max = {self.train_max})")

    @property
    def above_training(self) -> NDArray[np.bool_]:
        """Which test sizes lie above the training range."""
        return np.array(self.test_sizes) > self.train_max


def seed_einsum(equation: str, params: torch.Tensor, data: torch.Tensor, param_dims: int) -> torch.Tensor:
    """``torch.einsum(equation, params, data)`` for parameters with any leading (schedule, seed)
    dimensions and data with or without a leading seed dimension.

    ``equation`` is written for one model and unbatched data, e.g. ``"d,bnd->bn"``;
    ``param_dims`` is the number of dimensions of one model's parameter. With
    data of one more dimension than the equation's (a seed dimension), the
    parameter's last leading dimension is that seed dimension and is contracted
    batch-wise (one small matrix product per seed, not a broadcast copy).

    Parameters
    ----------
    equation : str
        An einsum equation for one model and unbatched data, ``"<param>,<data>-><output>"``.
    params : torch.Tensor
        Parameters with leading (schedule, seed) dimensions, then ``param_dims`` dimensions of one model.
    data : torch.Tensor
        Data as the equation has them, or with one leading seed dimension more.
    param_dims : int
        The number of dimensions of one model's parameter.

    Returns
    -------
    torch.Tensor
        The leading dimensions of ``params``, then the equation's output.

    Raises
    ------
    ValueError
        If the data have a seed dimension that the parameters' last leading dimension does not match.
    """
    inputs, output = equation.split("->")
    param_spec, data_spec = inputs.split(",")
    leading = params.shape[: params.ndim - param_dims]
    if data.ndim == len(data_spec) + 1:
        if not leading or leading[-1] != data.shape[0]:
            raise ValueError(
                f"data with a seed dimension {data.shape[0]} need parameters with that last leading dimension"
            )
        flat = params.reshape(-1, *params.shape[params.ndim - param_dims - 1 :])
        result = torch.einsum(f"Ms{param_spec},s{data_spec}->Ms{output}", flat, data).contiguous()
    else:
        flat = params.reshape(-1, *params.shape[params.ndim - param_dims :])
        result = torch.einsum(f"M{param_spec},{data_spec}->M{output}", flat, data)
    return result.reshape(*leading, *result.shape[(2 if data.ndim == len(data_spec) + 1 else 1) :])


def draw_shape(
    rng: object, batch_size: object, shortest: int, longest: int, names: tuple[str, str]
) -> tuple[list[np.random.Generator], tuple[int, ...]]:
    """The generators and the batch shape of a seeded draw of padded sequences (the regression's
    :func:`~lagtheory.experiments.tasks.sequences.regression.sample_batch`, the prompts of
    :func:`~lagtheory.experiments.tasks.sequences.icl.sample_prompts`), after the checks of their arguments.

    Parameters
    ----------
    rng : object
        A numpy.random.Generator, or a non-empty list of them (one per seed).
    batch_size : object
        Sequences per batch (an int), or a shape (a tuple of int); each entry >= 1.
    shortest, longest : int
        The size range: ``shortest`` >= 1, ``longest`` >= ``shortest``.
    names : tuple of str
        The names of ``shortest`` and ``longest`` in the caller, named in the errors.

    Returns
    -------
    tuple
        (the generators as a list, the batch shape as a tuple).

    Raises
    ------
    TypeError
        If ``rng`` is not a generator or a list of them, or a size is not an integer.
    ValueError
        If a size is out of range.
    """
    rngs = rng if isinstance(rng, list) else [rng]
    if not rngs or not all(isinstance(g, np.random.Generator) for g in rngs):
        raise TypeError(f"rng must be a numpy.random.Generator or a list of them, got {type(rng).__name__}")
    shape = tuple(batch_size) if isinstance(batch_size, tuple) else (batch_size,)
    for size in shape:
        check_integer(size, "batch_size", minimum=1)
    check_integer(shortest, names[0], minimum=1)
    check_integer(longest, names[1], minimum=shortest)
    return rngs, shape


STREAM_CHUNK = 25
"""Training batches are drawn ``STREAM_CHUNK`` steps at a time per seed (one generator call per quantity)."""


@fill_doc
class SeedStream:
    """The training batches of several seeds, drawn from one generator per seed (``seed_rng(seed, 1)``),
    ``STREAM_CHUNK`` steps at a time, in one vectorised call with a leading seed dimension (a seed's
    batches do not depend on the other seeds).

    Parameters
    ----------
    task : SequenceRegression
        Gives the sampler and the training range.
    %(seeds)s
    batch_size : int
        Examples per step and seed.
    """

    def __init__(self, task: SequenceRegression, seeds: Sequence[int], batch_size: int) -> None:
        self.task, self.batch_size = task, batch_size
        self.generators = [seed_rng(seed, 1) for seed in seeds]
        self.next_step = 0
        self.chunk: Any = None

    def batch(self, step: int) -> Any:
        """The batch of step ``step`` for every seed, with a leading seed dimension.

        Parameters
        ----------
        step : int
            The step; the stream is read in order, 0, 1, 2, ...

        Returns
        -------
        object
            The task's batch.

        Raises
        ------
        ValueError
            If ``step`` is not the next step.
        """
        if step != self.next_step:
            raise ValueError(f"the stream is read in order: expected step {self.next_step}, got {step}")
        self.next_step += 1
        offset = step % STREAM_CHUNK
        if offset == 0:
            setting = self.task.setting
            shape = (STREAM_CHUNK, self.batch_size)
            self.chunk = self.task.sample(self.generators, shape, setting.train_min, setting.train_max)
        kind = type(self.chunk)
        fields = {f.name: getattr(self.chunk, f.name) for f in dataclasses.fields(kind)}
        return kind(**{name: None if value is None else value[:, offset] for name, value in fields.items()})


SEQUENCE_METRICS = ("test_errors", "test_loss", "zero_loss")
"""Every metric :meth:`SequenceRegression.evaluate` returns (regression and in-context regression), the list the
records store from (:func:`lagtheory.experiments.exploratory.entries.cell_values`): a metric added to ``evaluate``
and not here fails ``tests/test_stored_metrics.py``, naming it."""


class SequenceRegression:
    """An engine task on the squared loss with held-out batches per test size (module docstring).

    Subclasses set ``name`` and ``setting`` and implement :meth:`~lagtheory.experiments.engine.cells.Task.parameter_shapes`,
    :meth:`~lagtheory.experiments.engine.cells.Task.preset_attention`, :meth:`sample` (one seed's batch), :meth:`predict`
    (parameters with leading dimensions, a batch with or without a seed dimension),
    :meth:`target` and :meth:`~lagtheory.experiments.engine.cells.Task.observe`.
    """

    name: str
    setting: SequenceSetting

    def sample(
        self,
        rng: np.random.Generator | list[np.random.Generator],
        batch_size: int | tuple[int, ...],
        min_size: int,
        max_size: int,
    ) -> Any:
        """A batch from one generator, or (a list of generators) with a leading seed dimension.

        Parameters
        ----------
        rng : numpy.random.Generator or list of numpy.random.Generator
            One generator, or one per seed.
        batch_size : int or tuple of int
            Sequences per batch, or a shape (several steps' batches at once); each >= 1.
        min_size, max_size : int
            The sizes are uniform on ``min_size..max_size``.

        Returns
        -------
        object
            The task's batch.
        """
        raise NotImplementedError

    def predict(self, params: Mapping[str, torch.Tensor], batch: Any) -> torch.Tensor:
        """The predictions of the models ``params`` on ``batch`` (implemented by subclasses).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The parameters, each with leading (schedule, seed) dimensions.
        batch : object
            A batch of :meth:`sample`, with or without a leading seed dimension.

        Returns
        -------
        torch.Tensor
            The leading dimensions, then the batch's.
        """
        raise NotImplementedError

    def target(self, batch: Any) -> torch.Tensor:
        """The regression targets of ``batch`` (implemented by subclasses).

        Parameters
        ----------
        batch : object
            A batch of :meth:`sample`, with or without a leading seed dimension.

        Returns
        -------
        torch.Tensor
            One target per sequence.
        """
        raise NotImplementedError

    @fill_doc
    def training_stream(self, seeds: Sequence[int], steps: int, batch_size: int) -> SeedStream:
        """The training batches of these seeds (:class:`SeedStream`).

        Parameters
        ----------
        %(seeds)s
        steps : int
            The number of steps (the stream draws as many as are read).
        batch_size : int
            Sequences per step and seed.

        Returns
        -------
        SeedStream
            The stream.
        """
        return SeedStream(self, seeds, batch_size)

    def losses(self, params: Mapping[str, torch.Tensor], batch: Any) -> torch.Tensor:
        """The mean squared error over the batch of each (schedule, seed).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The parameters, each with leading (schedule, seed) dimensions.
        batch : object
            A batch of :meth:`sample`, with or without a leading seed dimension.

        Returns
        -------
        torch.Tensor
            Shape (schedules, seeds).
        """
        return ((self.predict(params, batch) - self.target(batch)) ** 2).mean(dim=-1)

    def test_batches(self) -> list[Any]:
        """One fixed batch of ``test_size`` sequences of each test size (all of that exact size)."""
        if not hasattr(self, "_tests"):
            s = self.setting
            self._tests = [self.sample(seed_rng(s.test_seed, n), s.test_size, n, n) for n in s.test_sizes]
        return self._tests

    def evaluate(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, NDArray]:
        """``test_errors`` (..., test sizes) the mean squared error on each held-out batch, ``test_loss`` their
        mean over the test sizes above the training range, and ``zero_loss`` the same mean for the prediction
        0 (the mean square of the targets). Evaluated one row of the leading dimension at a time (memory).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The trained parameters, each with leading (schedule, seed) dimensions.

        Returns
        -------
        dict of str to ndarray
            ``test_errors``, ``test_loss`` and ``zero_loss``.
        """
        leading = next(iter(params.values())).shape[0]
        errors = []
        for row in range(leading):
            one = {name: value[row] for name, value in params.items()}
            errors.append(
                [((self.predict(one, batch) - self.target(batch)) ** 2).mean(dim=-1) for batch in self.test_batches()]
            )
        test_errors = torch.stack([torch.stack(row, dim=-1) for row in errors]).numpy()
        above = self.setting.above_training
        zero = np.mean(
            [
                float((self.target(batch) ** 2).mean())
                for batch, big in zip(self.test_batches(), above, strict=True)
                if big
            ]
        )
        return {
            "test_errors": test_errors,
            "test_loss": test_errors[..., above].mean(axis=-1),
            "zero_loss": np.full(test_errors.shape[:-1], zero),
        }
