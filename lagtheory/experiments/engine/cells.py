"""The experiment engine: every schedule of a comparison and every seed trained
in one forward and backward pass per step.

A *task* (:class:`Task`: languages, regression, in-context regression)
declares its parameters and which group each belongs to, draws the training
data of a seed, computes the per-seed loss of parameters that carry a leading
(schedule, seed) dimension, and evaluates trained parameters. The engine
(:func:`run_cell`) stacks the parameters of all schedules and seeds, so a step
costs one batched forward and one backward pass whatever the number of seeds;
since the loss of seed j depends only on seed j's parameters, the gradient of
the summed loss with respect to them is seed j's own gradient, and torch's SGD
and Adam are elementwise, so a seed trained in a batch of seeds follows the
same trajectory as trained alone (the tests check this to 1e-12).

Pairing: within a seed every schedule starts from the same parameters and
sees the same batch at every step. The seed fixes two independent streams
(``numpy.random.SeedSequence([seed, 0])`` for the initialisation, ``[seed, 1]``
for the training data), so a seed's data do not depend on which other seeds
run alongside it.

The knobs of a study are the fields of :class:`~lagtheory.experiments.engine.config.TrainingConfig`: the step
budget and its accounting, per-group step sizes, the optimiser (torch's SGD
or Adam), per-group initialisation scales and the attention's initialisation
(zero, random, or the task's preset value with a fresh readout).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.schedules import AVAILABLE_SCHEDULES, Phase, check_schedule_name, make_schedule
from lagtheory.training import TorchGroupOptimiser, descend

from ..parameters import fill_doc
from .config import GROUPS, TrainingConfig
from .device import check_device, on_device


class TrainingStream(Protocol):
    """The training batches of a group of seeds, consumed step by step in order."""

    def batch(self, step: int) -> Any:
        """The batch of step ``step`` for every seed, with a leading seed dimension.

        Parameters
        ----------
        step : int
            The step, 0, 1, 2, ... in this order.

        Returns
        -------
        object
            The task's batch (tensors, or a tuple, dict or dataclass of them).
        """


@dataclass(frozen=True)
class StoredStream:
    """A :class:`TrainingStream` drawn whole before training: every field is a tensor with leading (seed, step)
    dimensions, and a step's batch is every field at that step, in field order (the language and transformer
    tasks' streams are its subclasses)."""

    def batch(self, step: int) -> tuple[torch.Tensor, ...]:
        """Every field at step ``step``, in field order, with a leading seed dimension.

        Parameters
        ----------
        step : int
            The step, below the stream's number of steps.

        Returns
        -------
        tuple of torch.Tensor
            One tensor per field.
        """
        return tuple(getattr(self, field.name)[:, step] for field in fields(self))


class Task(Protocol):
    """What the engine needs from a task (module docstring). Parameter tensors have leading
    dimensions (schedules, seeds); data have a leading seed dimension."""

    name: str

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        """Parameter name -> (shape of one model's tensor, group "attention" or "output"), in draw order."""

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        """The attention parameters of ``attention_init="preset"`` (a value that solves the task)."""

    def training_stream(self, seeds: Sequence[int], steps: int, batch_size: int) -> TrainingStream:
        """The training data of these seeds for ``steps`` steps (seed j's from ``SeedSequence([seed_j, 1])``).

        Parameters
        ----------
        seeds : sequence of int
            The seeds, checked by :func:`check_seeds`.
        steps : int
            The number of steps, >= 1.
        batch_size : int
            Examples per step and seed, >= 1.

        Returns
        -------
        TrainingStream
            The batches, consumed step by step.
        """

    def losses(self, params: Mapping[str, torch.Tensor], batch: Any) -> torch.Tensor:
        """The mean training loss over the batch of each (schedule, seed).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The parameters, each with leading dimensions (schedules, seeds).
        batch : object
            One step's batch of :meth:`TrainingStream.batch`.

        Returns
        -------
        torch.Tensor
            Shape (schedules, seeds).
        """

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """Quantities recorded before every step.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The current parameters, each with leading dimensions (schedules, seeds).

        Returns
        -------
        mapping of str to torch.Tensor
            Each of shape (schedules, seeds), or (schedules, seeds, ...) for a vector per run.
        """

    def evaluate(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, NDArray]:
        """Test metrics of trained parameters.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The trained parameters, each with leading dimensions (schedules, seeds), on the CPU.

        Returns
        -------
        mapping of str to ndarray
            Each of shape (schedules, seeds, ...).
        """


@dataclass(frozen=True)
class CellResult:
    """The runs of one or several cells, one row per (schedule, configuration), all seeds.

    ``schedules`` names the schedule of each row and ``configs`` its
    :class:`~lagtheory.experiments.engine.config.TrainingConfig`; ``losses`` (rows, seeds, steps) the training loss
    before every step (NaN after a row has finished, and from the first
    non-finite value on for a run that diverged); ``traces`` name -> (rows,
    seeds, steps), or (rows, seeds, ..., steps) for an observed vector, what the
    task observes before every step, and the Euclidean
    distances ``attention_moved`` and ``output_moved`` of each group from its
    initial value; ``metrics`` name -> (rows, seeds, ...) the task's test
    metrics of the trained parameters; ``final`` name -> (rows, seeds, ...)
    the trained parameters; ``phases`` each row's schedule as run (the phases that
    :func:`lagtheory.schedules.make_schedule` built from its name and configuration).

    Attributes
    ----------
    schedules : tuple of str
        The schedule of each row.
    seeds : tuple of int
        The seeds.
    losses : ndarray
        float64 (rows, seeds, steps), the training loss before every step.
    traces : dict of str to ndarray
        float64 (rows, seeds, steps) per observed quantity.
    metrics : dict of str to ndarray
        (rows, seeds, ...) per test metric.
    final : dict of str to ndarray
        float64 (rows, seeds, ...) per trained parameter.
    configs : tuple of TrainingConfig, optional
        The configuration of each row.
    phases : tuple of tuple of Phase, optional
        The schedule of each row as run.
    """

    schedules: tuple[str, ...]
    seeds: tuple[int, ...]
    losses: NDArray[np.float64]
    traces: dict[str, NDArray[np.float64]]
    metrics: dict[str, NDArray]
    final: dict[str, NDArray[np.float64]]
    configs: tuple[TrainingConfig, ...] = ()
    phases: tuple[tuple[Phase, ...], ...] = ()

    def index(self, schedule: str) -> int:
        """The row of ``schedule`` in the arrays (the first, if several rows share it).

        Parameters
        ----------
        schedule : str
            A schedule name among ``schedules``.

        Returns
        -------
        int
            The row index.

        Raises
        ------
        ValueError
            If no row has that schedule.
        """
        return self.schedules.index(schedule)

    def subset(self, rows: Sequence[int]) -> CellResult:
        """The rows ``rows`` alone, cut to the steps that the longest of them takes.

        Parameters
        ----------
        rows : sequence of int
            A non-empty sequence of row indices in ``[0, len(schedules))``.

        Returns
        -------
        CellResult
            The selected rows.

        Raises
        ------
        ValueError
            If ``rows`` is empty or an index is out of range.
        """
        rows = list(rows)
        if not rows or any(not 0 <= k < len(self.schedules) for k in rows):
            raise ValueError(f"rows must be a non-empty list of row indices below {len(self.schedules)}, got {rows!r}")
        steps = max(sum(phase.steps for phase in self.phases[k]) for k in rows) if self.phases else None
        return CellResult(
            schedules=tuple(self.schedules[k] for k in rows),
            seeds=self.seeds,
            losses=self.losses[rows][..., :steps],
            traces={key: value[rows][..., :steps] for key, value in self.traces.items()},
            metrics={key: value[rows] for key, value in self.metrics.items()},
            final={key: value[rows] for key, value in self.final.items()},
            configs=tuple(self.configs[k] for k in rows) if self.configs else (),
            phases=tuple(self.phases[k] for k in rows) if self.phases else (),
        )


@fill_doc
def check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    """A non-empty sequence of distinct integers >= 0, checked.

    Parameters
    ----------
    %(seeds)s

    Returns
    -------
    tuple of int
        The seeds as Python ints.

    Raises
    ------
    ValueError
        If ``seeds`` is not a non-empty sequence, a seed is negative, or two are equal.
    TypeError
        If a seed is not an integer.
    """
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty sequence of integers >= 0, got {seeds!r}")
    checked = tuple(check_integer(seed, "seeds[i]", minimum=0) for seed in seeds)
    if len(set(checked)) != len(checked):
        raise ValueError(f"seeds must be distinct, got {seeds!r}")
    return checked


def seed_rng(seed: int, stream: int) -> np.random.Generator:
    """A numpy generator for one stream of a seed, seeded by numpy's ``SeedSequence([seed, stream])``.

    Parameters
    ----------
    seed : int
        The seed, >= 0.
    stream : int
        0: initialisation, 1: training data; a test seed's streams are its test sizes.

    Returns
    -------
    numpy.random.Generator
        A fresh generator.
    """
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


@fill_doc
def standard_draws(task: Task, seeds: Sequence[int]) -> dict[str, torch.Tensor]:
    """Per seed, one generator (``seed_rng(seed, 0)``) draws a standard normal array for every
    parameter in the task's order, whatever the configuration.

    Parameters
    ----------
    task : Task
        Gives the parameters' names and shapes.
    %(seeds)s

    Returns
    -------
    dict of str to torch.Tensor
        name -> float64 (seeds, ...).
    """
    shapes = task.parameter_shapes()
    draws: dict[str, list[torch.Tensor]] = {name: [] for name in shapes}
    for seed in seeds:
        rng = seed_rng(seed, 0)
        for name, (shape, _) in shapes.items():
            draws[name].append(torch.from_numpy(np.asarray(rng.standard_normal(shape), dtype=np.float64)))
    return {name: torch.stack(values) for name, values in draws.items()}


def scaled_parameters(task: Task, config: TrainingConfig, draws: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The initial parameters of :class:`~lagtheory.experiments.engine.config.TrainingConfig` from the seeds' standard normal ``draws``
    (:func:`standard_draws`): the readout group ``output_scale`` times its draw, the attention 0,
    ``attention_scale`` times its draw, or the task's preset value; a parameter that the task names in
    its optional ``zero_at_start()`` (a task's fixed initialisation, such as biases at 0) starts at 0
    whatever the configuration (its draw is still made, so the others' do not move).

    Parameters
    ----------
    task : Task
        Gives the parameters' shapes and groups (and the preset attention).
    config : TrainingConfig
        The scales and the attention's initialisation.
    draws : mapping of str to torch.Tensor
        The standard normal draws of :func:`standard_draws`, name -> (seeds, ...).

    Returns
    -------
    dict of str to torch.Tensor
        name -> float64 (seeds, ...).
    """
    shapes = task.parameter_shapes()
    preset = task.preset_attention() if config.attention_init == "preset" else {}
    zero = set(task.zero_at_start()) if hasattr(task, "zero_at_start") else set()
    params = {}
    for name, (shape, group) in shapes.items():
        normal = draws[name]
        if name in zero:
            params[name] = torch.zeros_like(normal)
        elif group == "output":
            params[name] = config.output_scale * normal
        elif config.attention_init == "zero":
            params[name] = torch.zeros_like(normal)
        elif config.attention_init == "random":
            params[name] = config.attention_scale * normal
        else:
            params[name] = torch.as_tensor(preset[name], dtype=torch.float64).expand(normal.shape[0], *shape).clone()
    return params


@fill_doc
def initial_parameters(task: Task, config: TrainingConfig, seeds: Sequence[int]) -> dict[str, torch.Tensor]:
    """The initial parameters of every seed, name -> (seeds, ...) float64 (:class:`~lagtheory.experiments.engine.config.TrainingConfig`):
    :func:`scaled_parameters` of :func:`standard_draws`, so the readout of a seed is the same draw
    (times its scale) under every configuration.

    Parameters
    ----------
    task : Task
        Gives the parameters' shapes and groups.
    config : TrainingConfig
        The scales and the attention's initialisation.
    %(seeds)s

    Returns
    -------
    dict of str to torch.Tensor
        name -> float64 (seeds, ...).
    """
    return scaled_parameters(task, config, standard_draws(task, seeds))


@fill_doc
def run_cell(
    task: Task,
    config: TrainingConfig,
    schedules: Sequence[str] = AVAILABLE_SCHEDULES,
    seeds: Sequence[int] = tuple(range(30)),
    progress: Callable[[int], None] | None = None,
) -> CellResult:
    """Train every schedule on every seed under ``config`` in one batched loop and evaluate them
    (:func:`run_rows` with one row per schedule).

    Parameters
    ----------
    task : Task
        The task trained.
    config : TrainingConfig
        How every schedule is trained.
    schedules : sequence of str, optional
        A non-empty sequence of schedule names (default: all of
        :data:`~lagtheory.schedules.AVAILABLE_SCHEDULES`).
    seeds : sequence of int, optional
        Distinct integers >= 0 (default 0 to 29).
    %(progress)s

    Returns
    -------
    CellResult
        One row per schedule.

    Raises
    ------
    ValueError
        If ``schedules`` is empty or a string, or as :func:`run_rows` raises.
    TypeError
        If ``config`` is not a :class:`~lagtheory.experiments.engine.config.TrainingConfig`.
    """
    if isinstance(schedules, str) or not schedules:
        raise ValueError(f"schedules must be a non-empty sequence of schedule names, got {schedules!r}")
    if not isinstance(config, TrainingConfig):
        raise TypeError(f"config must be a TrainingConfig, got {type(config).__name__}")
    return run_rows(task, [(name, config) for name in schedules], seeds, progress)


@fill_doc
def run_rows(
    task: Task,
    rows: Sequence[tuple[str, TrainingConfig]],
    seeds: Sequence[int] = tuple(range(30)),
    progress: Callable[[int], None] | None = None,
    evaluate: bool = True,
    device: str | torch.device = "cpu",
) -> CellResult:
    """Train every row (a schedule under a configuration) on every seed in one batched loop and
    evaluate them (``evaluate=False``: no test metrics).

    The rows may differ in everything but the optimiser and the batch size: step sizes, step
    budget and accounting, initialisation. All rows and seeds advance together through
    :func:`lagtheory.training.descend`: at step i the task's loss of every (row, seed) still
    training is computed in one call on the batch of step i (the same batch for every row, as
    within a cell), the gradient of their sum is taken only for the groups that some phase
    trains, and :class:`lagtheory.training.TorchGroupOptimiser` moves each row's groups with its
    own phase's step sizes. Since the loss of a (row, seed) depends only on its own parameters
    and the optimisers are elementwise, a row trained among others follows the same trajectory
    as trained alone (the tests check this to 1e-12); batching rows shares the data and the
    per-step overhead between the cells of a sweep. A run whose loss becomes non-finite is
    recorded (NaN from then on), not stopped. ``progress(1)`` is called after every step.

    ``device``: where the training runs ("cpu", or "cuda" where torch finds a GPU;
    :func:`~lagtheory.experiments.engine.device.check_device`). The initial parameters are drawn on the CPU as always and moved there, so
    are every step's batch (:func:`~lagtheory.experiments.engine.device.on_device`) and a task's own tensors (its optional ``to(device)``);
    the traces, losses and trained parameters come back to the CPU, and the test metrics are computed
    there. On a GPU the floats may differ from the CPU's in the last bits (other kernels).

    Parameters
    ----------
    task : Task
        The task trained (its parameter groups "attention" or "output").
    rows : sequence of tuple of (str, TrainingConfig)
        A non-empty sequence of (schedule name, configuration) pairs sharing the optimiser
        and the batch size.
    seeds : sequence of int, optional
        Distinct integers >= 0 (default 0 to 29).
    %(progress)s
    evaluate : bool, optional
        Whether to compute the test metrics.
    device : str or torch.device, optional
        Where the training runs (:func:`~lagtheory.experiments.engine.device.check_device`).

    Returns
    -------
    CellResult
        One row per entry of ``rows``.

    Raises
    ------
    ValueError
        If ``rows`` is empty, a schedule name is unknown, the rows differ in optimiser or
        batch size, the seeds or the device are invalid, or a task parameter has an unknown group.
    TypeError
        If a row is not a (name, :class:`~lagtheory.experiments.engine.config.TrainingConfig`) pair.
    """
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not rows:
        raise ValueError("rows must be a non-empty sequence of (schedule name, TrainingConfig) pairs")
    names = []
    configs = []
    for row in rows:
        if not isinstance(row, tuple) or len(row) != 2 or not isinstance(row[1], TrainingConfig):
            raise TypeError(f"rows must hold (schedule name, TrainingConfig) pairs, got {row!r}")
        names.append(check_schedule_name(row[0]))
        configs.append(row[1])
    if len({(c.optimiser, c.batch_size) for c in configs}) != 1:
        raise ValueError("the rows batched together must share the optimiser and the batch size")
    seeds = check_seeds(seeds)
    device = check_device(device)
    shapes = task.parameter_shapes()
    for name, (_, group) in shapes.items():
        if group not in GROUPS:
            raise ValueError(f"task parameter {name!r} must be in group 'attention' or 'output', got {group!r}")
    phases = [make_schedule(name, config) for name, config in zip(names, configs, strict=True)]
    draws = standard_draws(task, seeds)
    if hasattr(task, "to"):
        task.to(device)
    initial_by_config: dict[TrainingConfig, dict[str, torch.Tensor]] = {}
    for config in configs:
        if config not in initial_by_config:
            initial_by_config[config] = {
                name: value.to(device) for name, value in scaled_parameters(task, config, draws).items()
            }
    initial = {name: torch.stack([initial_by_config[c][name] for c in configs]) for name in shapes}
    params = [{name: initial_by_config[c][name].clone().requires_grad_(True) for name in shapes} for c in configs]
    optimiser = TorchGroupOptimiser(
        [[p[name] for name, (_, group) in shapes.items() if group == "attention"] for p in params],
        [[p[name] for name, (_, group) in shapes.items() if group == "output"] for p in params],
        kind=configs[0].optimiser,
    )
    total = max(sum(phase.steps for phase in schedule) for schedule in phases)
    stream = task.training_stream(seeds, total, configs[0].batch_size)
    traces: dict[str, list[NDArray[np.float64]]] = {}

    def stacked(detach: bool, which: Sequence[int]) -> dict[str, torch.Tensor]:
        return {
            name: torch.stack([params[k][name].detach() if detach else params[k][name] for k in which])
            for name in shapes
        }

    attention_names = [name for name, (_, group) in shapes.items() if group == "attention"]
    output_names = [name for name, (_, group) in shapes.items() if group == "output"]
    everything = range(len(params))

    def displacement(current: Mapping[str, torch.Tensor], names: list[str]) -> torch.Tensor:
        squares = [((current[name] - initial[name]) ** 2).reshape(*current[name].shape[:2], -1) for name in names]
        return torch.cat(squares, dim=-1).sum(dim=-1).sqrt()

    def gradient(step: int, phases_now: tuple[Phase | None, ...]) -> NDArray[np.float64]:
        with torch.no_grad():
            current = stacked(True, everything)
            observed = dict(task.observe(current))
            observed["attention_moved"] = displacement(current, attention_names)
            observed["output_moved"] = displacement(current, output_names)
            for key, value in observed.items():
                traces.setdefault(key, []).append(value.cpu().numpy().copy())
        active = [k for k, phase in enumerate(phases_now) if phase is not None]
        losses = task.losses(stacked(False, active), on_device(stream.batch(step), device))
        optimiser.backward(losses.sum(), phases_now)
        values = np.full((len(params), len(seeds)), np.nan)
        values[active] = losses.detach().cpu().numpy()
        if progress is not None:
            progress(1)
        return values

    losses = descend(phases, gradient, optimiser, allow_non_finite=True)  # (steps, rows, seeds)
    losses = np.moveaxis(losses, 0, -1)
    losses[~np.isfinite(losses)] = np.nan
    final = {name: value.cpu() for name, value in stacked(True, everything).items()}
    if hasattr(task, "to"):
        task.to(torch.device("cpu"))
    metrics = {}
    if evaluate:
        with torch.no_grad():
            metrics = {key: np.asarray(value) for key, value in task.evaluate(final).items()}
    return CellResult(
        schedules=tuple(names),
        seeds=seeds,
        losses=losses,
        traces={key: np.moveaxis(np.array(values), 0, -1) for key, values in traces.items()},
        metrics=metrics,
        final={name: value.numpy().copy() for name, value in final.items()},
        configs=tuple(configs),
        phases=tuple(tuple(schedule) for schedule in phases),
    )
