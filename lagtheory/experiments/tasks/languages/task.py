"""The language experiment as an engine task (:mod:`lagtheory.experiments.engine.cells`).

Data (:prf:ref:`def-data`, with our choices for these languages): the label y = +1
or -1 with probability 1/2, the length n uniform on the lengths in
1..max_train_length at which the class of y is non-empty, and the word uniform
among the words of length n with label y
(:func:`lagtheory.experiments.tasks.languages.sampling.labelled_words`). Training and
testing read a word through its feature counts and the features of the
positions that carry their own learned score (exact: the model is
permutation invariant apart from those). The loss is the exact logistic loss
(:func:`lagtheory.losses.logistic_loss`).

Evaluation: the accuracy and the logistic loss on fresh random words
(balanced classes, one fixed test seed) at each test length, the protocol of
Deletang et al. (2023); and the exact worst case over *every* word at each
horizon length up to 1e12
(:func:`lagtheory.experiments.tasks.languages.worst_case.verified_horizons`): the horizon is
the largest checked length up to which every word of every checked length is
right, and a run *recognises* the language when that is the largest checked
length. A run whose parameters are not finite (it diverged) recognises
nothing and has horizon 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.count_forward import linear_readout, pooled_from_counts, pooled_with_prefix
from lagtheory.losses import logistic_loss

from ...engine.cells import StoredStream, TrainingConfig, seed_rng
from ...parameters import fill_doc
from .catalogue import LanguageSpec
from .features import feature_counts, padded_feature_ids
from .sampling import labelled_words, sample_strings
from .worst_case import verified_horizons


def default_horizon_lengths() -> tuple[int, ...]:
    """Every length 1..40, then 25 lengths spaced evenly in log from 41 to 1e12."""
    above = np.unique(np.round(np.geomspace(41, 1e12, 25)).astype(np.int64))
    return tuple(range(1, 41)) + tuple(int(n) for n in above)


@dataclass(frozen=True)
class LanguageSetting:
    """The data and tests of the language experiment (the same for every language and schedule):
    training lengths 1 to ``max_train_length``; ``test_per_class`` random words of each class at each
    of ``test_lengths`` drawn from ``test_seed``; the exact worst case at each of ``horizon_lengths``.

    Attributes
    ----------
    max_train_length : int, optional
        The longest training length, >= 2.
    test_lengths : tuple of int, optional
        Strictly increasing lengths >= 1.
    test_per_class : int, optional
        Random test words per class and length, >= 1.
    test_seed : int, optional
        Seeds the test words, >= 0.
    horizon_lengths : tuple of int, optional
        Strictly increasing lengths >= 1 of the exact worst case.

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer.
    """

    max_train_length: int = 40
    test_lengths: tuple[int, ...] = (5, 10, 20, 40, 50, 100, 200, 500, 1000)
    test_per_class: int = 32
    test_seed: int = 2023
    horizon_lengths: tuple[int, ...] = default_horizon_lengths()

    def __post_init__(self) -> None:
        check_integer(self.max_train_length, "max_train_length", 2)
        check_integer(self.test_per_class, "test_per_class", 1)
        check_integer(self.test_seed, "test_seed", 0)
        for name in ("test_lengths", "horizon_lengths"):
            values = getattr(self, name)
            if not values or list(values) != sorted(set(values)) or min(values) < 1:
                raise ValueError(f"{name} must be a non-empty strictly increasing tuple of lengths >= 1")


LANGUAGE_TRAINING = TrainingConfig(
    steps=150, attention_lr=0.5, output_lr=0.5, warm_steps=40, big_step=100.0, batch_size=32, output_scale=0.1
)
"""The regime of the chapter; SGD, one step size 0.5, attention at 0, readout N(0, 0.1^2)."""


@dataclass(frozen=True)
class CountStream(StoredStream):
    """Training batches of several seeds as feature counts: ``counts`` (seeds, steps, batch, d),
    ``prefix`` (seeds, steps, batch, P) the features of the P positions with their own score (-1
    past a word's end), ``labels`` (seeds, steps, batch) +-1.

    Attributes
    ----------
    counts : torch.Tensor
        float64 (seeds, steps, batch, d).
    prefix : torch.Tensor
        int64 (seeds, steps, batch, P).
    labels : torch.Tensor
        float64 (seeds, steps, batch), +-1.
    """

    counts: torch.Tensor
    prefix: torch.Tensor
    labels: torch.Tensor


LANGUAGE_METRICS = ("accuracy", "accuracy_above_training", "test_loss", "zero_loss", "horizon", "recognised")
"""Every metric :meth:`LanguageRuns.evaluate` returns, the list the records store from
(:func:`lagtheory.experiments.exploratory.entries.cell_values`): a metric added to ``evaluate`` and not here fails
``tests/test_stored_metrics.py``, naming it."""


class LanguageRuns:
    """One language task (catalogue entry) under a :class:`LanguageSetting`, as an engine task.

    The trained parameters are ``u`` (d,) the readout (output group), ``theta`` (d,) the
    attention scores and, with the marker, ``s`` () the position-1 score, or
    with P learned position scores ``s`` (P,) (attention group).

    Parameters
    ----------
    task : LanguageSpec
        The catalogue entry.
    setting : LanguageSetting
        The data and tests.

    Raises
    ------
    TypeError
        If ``task`` is not a :class:`~lagtheory.experiments.tasks.languages.catalogue.LanguageSpec`.
    """

    def __init__(self, task: LanguageSpec, setting: LanguageSetting) -> None:
        if not isinstance(task, LanguageSpec):
            raise TypeError(f"task must be a LanguageSpec, got {type(task).__name__}")
        self.task, self.setting, self.name = task, setting, task.name
        self._tests: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        self._stream: tuple[tuple[tuple[int, ...], int, int], CountStream] | None = None

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        shapes = {"u": ((self.task.vocab_size,), "output"), "theta": ((self.task.vocab_size,), "attention")}
        if self.task.position_scores:
            shapes["s"] = ((() if self.task.first_position_marker else (self.task.position_scores,)), "attention")
        return shapes

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        """The witness's attention (theta, and s): it recognises the language with the witness's readout."""
        if self.task.witness is None:
            raise ValueError(f"{self.name} has no witness, so no preset attention")
        preset = {"theta": torch.tensor(self.task.witness["theta"], dtype=torch.float64)}
        if self.task.position_scores:
            preset["s"] = torch.tensor(self.task.witness["s"], dtype=torch.float64)
        return preset

    def words_to_counts(self, words: NDArray, lengths: NDArray) -> tuple[NDArray, NDArray]:
        """Padded words -> (feature counts (rows, d), features of the positions with their own score
        (rows, P), -1 past a word's end).

        Parameters
        ----------
        words : ndarray
            int64 (rows, width), padded words over the task's alphabet.
        lengths : ndarray
            int64 (rows,), their lengths.

        Returns
        -------
        counts, prefix : ndarray
            (rows, d) and (rows, P).
        """
        ids = padded_feature_ids(words, lengths, self.task.features, self.task.alphabet_size)
        return feature_counts(ids, self.task.vocab_size), ids[:, : self.task.position_scores]

    @fill_doc
    def training_stream(self, seeds: Sequence[int], steps: int, batch_size: int) -> CountStream:
        """Each seed's uniforms from ``seed_rng(seed, 1)``, turned into words and counts in one vectorised pass
        (the last stream is kept, for the next run on the same seeds).

        Parameters
        ----------
        %(seeds)s
        steps : int
            The number of steps.
        batch_size : int
            Words per step and seed.

        Returns
        -------
        CountStream
            The batches.
        """
        key = (tuple(seeds), steps, batch_size)
        if self._stream is not None and self._stream[0] == key:
            return self._stream[1]
        width = self.setting.max_train_length + 2
        uniforms = np.concatenate([seed_rng(seed, 1).random((steps * batch_size, width)) for seed in seeds])
        labels, lengths, words = labelled_words(self.task.dfa, self.setting.max_train_length, uniforms)
        counts, prefix = self.words_to_counts(words, lengths)
        shape = (len(seeds), steps, batch_size)
        stream = CountStream(
            counts=torch.from_numpy(counts.reshape(*shape, -1)),
            prefix=torch.from_numpy(prefix.reshape(*shape, prefix.shape[-1])),
            labels=torch.from_numpy(labels.reshape(shape).astype(np.float64)),
        )
        self._stream = (key, stream)
        return stream

    def outputs(self, params: Mapping[str, torch.Tensor], counts: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """The model output f of every model on every word (``forward_counts`` with leading model dimensions).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            ``u``, ``theta`` (and ``s``), each with leading (row, seed) dimensions.
        counts : torch.Tensor
            float64 (..., words, d), the feature counts.
        prefix : torch.Tensor
            int64 (..., words, P), the features of the positions with their own score.

        Returns
        -------
        torch.Tensor
            The leading dimensions, then (words,).
        """
        if not self.task.position_scores:
            h = pooled_from_counts(params["theta"], None, counts, None, "log")
        else:
            scores = params["s"].unsqueeze(-1) if self.task.first_position_marker else params["s"]
            h = pooled_with_prefix(params["theta"], scores, counts, prefix, "log")
        return linear_readout(params["u"], h)

    def losses(self, params: Mapping[str, torch.Tensor], batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The mean logistic loss over the batch of each (row, seed) model.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            ``u``, ``theta`` (and ``s``), each with leading (row, seed) dimensions.
        batch : tuple of torch.Tensor
            (counts, prefix, labels) of :meth:`~lagtheory.experiments.engine.cells.StoredStream.batch`.

        Returns
        -------
        torch.Tensor
            (rows, seeds).
        """
        counts, prefix, labels = batch
        return logistic_loss(labels * self.outputs(params, counts, prefix)).mean(dim=-1)

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """Nothing beyond the engine's displacements.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            Not used.

        Returns
        -------
        dict
            Empty.
        """
        return {}

    def test_words(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(counts (lengths, 2 per_class, d), prefix features (lengths, 2 per_class, P), labels) of the
        balanced test words, from ``test_seed``."""
        if self._tests is None:
            rng = np.random.default_rng(self.setting.test_seed)
            per_class = self.setting.test_per_class
            counts, firsts = [], []
            for length in self.setting.test_lengths:
                words = np.concatenate(
                    [sample_strings(self.task.dfa, length, label, per_class, rng) for label in (1, -1)]
                )
                count, first = self.words_to_counts(words, np.full(2 * per_class, length))
                counts.append(count)
                firsts.append(first)
            labels = np.tile(np.repeat([1.0, -1.0], per_class), (len(self.setting.test_lengths), 1))
            self._tests = (
                torch.from_numpy(np.array(counts)),
                torch.from_numpy(np.array(firsts)),
                torch.from_numpy(labels),
            )
        return self._tests

    def evaluate(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, NDArray]:
        """``accuracy`` (..., test lengths) on random words, ``accuracy_above_training`` its mean over the test
        lengths above the training range, ``test_loss`` the mean logistic loss on the test words above the
        training range and ``zero_loss`` that of the prediction 0 (log 2), ``horizon`` and ``recognised``
        from the exact worst case (0 and False for parameters that are not finite).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            ``u``, ``theta`` (and ``s``), the trained parameters, each with leading (row, seed) dimensions.

        Returns
        -------
        dict of str to ndarray
            The metrics above.
        """
        counts, prefix, labels = self.test_words()
        tests = len(self.setting.test_lengths)
        words = counts.shape[0] * counts.shape[1]
        outputs = self.outputs(params, counts.reshape(words, -1), prefix.reshape(words, prefix.shape[-1]))
        margins = (labels.reshape(-1) * outputs).reshape(*outputs.shape[:-1], tests, -1)
        accuracy = (margins > 0).to(torch.float64).mean(dim=-1).numpy()
        losses = logistic_loss(margins).mean(dim=-1).numpy()
        above = np.array(self.setting.test_lengths) > self.setting.max_train_length
        lead = params["theta"].shape[:-1]
        d = self.task.vocab_size
        theta = params["theta"].reshape(-1, d).numpy()
        u = params["u"].reshape(-1, d).numpy()
        s = params["s"].reshape(theta.shape[0], -1).numpy() if self.task.position_scores else None
        finite = np.isfinite(theta).all(axis=1) & np.isfinite(u).all(axis=1)
        if s is not None:
            finite &= np.isfinite(s).all(axis=1)
        horizon = np.zeros(theta.shape[0], dtype=np.int64)
        if finite.any():
            scores = None if s is None else s[finite] if not self.task.first_position_marker else s[finite, 0]
            horizon[finite] = verified_horizons(
                self.task, theta[finite], u[finite], scores, self.setting.horizon_lengths
            )
        horizon = horizon.reshape(lead)
        return {
            "accuracy": accuracy,
            "accuracy_above_training": accuracy[..., above].mean(axis=-1),
            "test_loss": losses[..., above].mean(axis=-1),
            "zero_loss": np.full(lead, float(np.log(2.0))),
            "horizon": horizon,
            "recognised": horizon == self.setting.horizon_lengths[-1],
        }
