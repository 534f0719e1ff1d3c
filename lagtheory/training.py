"""The one training loop of the package, generic over a gradient oracle, and the
updates it drives.

:func:`descend` runs one or several schedules (lists of
:class:`lagtheory.schedules.Phase`) in lock-step: at step i it asks the
gradient oracle for the losses at the current parameters of every schedule
(the oracle also leaves the gradients where the update finds them), then
calls the update with the phase each schedule is in. Schedules that have
finished (a shorter schedule under equal joint-phase steps) get the phase
None and are not moved. The loop serves

* the exact population gradient descent of the theory chapters
  (:func:`lagtheory.population_gd.run_schedule`: numpy gradients,
  :class:`NumpyGradientDescent`);
* the mini-batch runs of :mod:`lagtheory.sampled` and the seed-batched
  experiments of :mod:`lagtheory.experiments.engine.cells` (autograd gradients,
  :class:`TorchGroupOptimiser`: torch's SGD or Adam with one parameter group
  per schedule and parameter group).

A group whose step size in the current phase is 0 is frozen exactly: its
gradient is not used (numpy) or set to None, so that torch's optimisers skip
it and leave its state (Adam's moments and step count) untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from numpy.typing import NDArray

from ._validation import check_integer, check_scaling
from .exact_recognition import _recognition_trusted, check_max_length
from .memory import MEMORY_BUDGET
from .schedules import Phase, check_phases, step_plan

OPTIMISERS = ("sgd", "adam")
"""The optimisers of the torch training loop (:class:`TorchGroupOptimiser`); the studies compare both
(:class:`lagtheory.experiments.exploratory.design.Study`)."""

LOSS_STEP_BYTES = 160
"""Bytes per step of the losses :func:`descend` keeps (the oracle's array and the list's reference to it),
an upper bound: with ``LOSS_SCHEDULE_BYTES`` per schedule, 152 + 8 per schedule measured (tracemalloc;
benchmarks/bench.py's memory rows). Added to the plan's bytes (:func:`lagtheory.schedules.step_plan`)."""
LOSS_SCHEDULE_BYTES = 16
"""Bytes per schedule and step of the losses :func:`descend` keeps and returns (a float64 in the oracle's array
and one in the returned array)."""
RECORD_STEP_BYTES = 448
"""Bytes per step of a :class:`TrajectoryRecorder`'s point (two float64 pairs as arrays, the loss, the horizon and
the verdict), an upper bound: a population run keeps 320 a step beside the plan and the losses (measured with
tracemalloc, 545 a step in all over 1e5 steps)."""

GradientOracle = Callable[[int, tuple[Phase | None, ...]], NDArray[np.float64]]
"""(step, the phase of each schedule) -> the loss of each schedule at the current parameters,
shape (schedules,) or (schedules, ...). Before it returns, it hands the step's gradients to the
optimiser (:meth:`NumpyGradientDescent.set_gradients`, :meth:`TorchGroupOptimiser.backward`)."""


class Optimiser(Protocol):
    """What :func:`descend` moves the parameters with. The gradient oracle hands it the gradients of
    the current step; :meth:`update` then moves every schedule's groups with its phase's step sizes
    (a finished schedule, phase None, is not moved) and raises ValueError when no gradients were handed
    over since the last update. :class:`NumpyGradientDescent` and :class:`TorchGroupOptimiser` are the two."""

    def update(self, phases: tuple[Phase | None, ...]) -> None:
        """One step of every schedule with the handed-over gradients.

        Parameters
        ----------
        phases : tuple of (Phase or None)
            The phase of each schedule at this step (None: finished, not moved).

        Raises
        ------
        ValueError
            If no gradients were handed over since the last update.
        """
        ...


def descend(
    schedules: list[list[Phase]],
    gradient: GradientOracle,
    optimiser: Optimiser,
    allow_non_finite: bool = False,
    *,
    memory_budget: int = MEMORY_BUDGET,
    kept_per_step: int = 0,
) -> NDArray[np.float64]:
    """Run the schedules in lock-step; return the losses the oracle reported, shape (steps, schedules, ...).

    Step i calls ``gradient(i, phases)``, which hands the step's gradients to ``optimiser``, and then
    ``optimiser.update(phases)``, with
    ``phases[k]`` the phase that step i of schedule k belongs to (None once
    schedule k has finished); the number of steps is that of the longest
    schedule (:func:`lagtheory.schedules.step_plan`). A non-finite loss of a
    schedule still running raises ValueError, unless ``allow_non_finite``
    (the seed-batched experiments record a diverged run instead).

    Parameters
    ----------
    schedules : list of list of Phase
        A non-empty list of schedules.
    gradient : callable
        The gradient oracle (:data:`GradientOracle`).
    optimiser : Optimiser
        Moves the parameters (:class:`NumpyGradientDescent` or :class:`TorchGroupOptimiser`).
    allow_non_finite : bool, optional
        Record a non-finite loss instead of raising.
    memory_budget : int, optional
        The most bytes the step plan (:func:`lagtheory.schedules.step_plan`), the losses
        (``LOSS_STEP_BYTES`` a step and ``LOSS_SCHEDULE_BYTES`` a step of each schedule) and what the
        oracle keeps per step may take (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.
    kept_per_step : int, optional
        The bytes the gradient oracle keeps per step (``RECORD_STEP_BYTES`` for a
        :class:`TrajectoryRecorder`'s point), >= 0; 0 by default. Keyword only.

    Returns
    -------
    ndarray
        float64 (steps, schedules, ...).

    Raises
    ------
    ValueError
        If ``schedules`` is not a non-empty list of schedules, or (unless ``allow_non_finite``) a
        running schedule's loss is not finite; before anything is allocated, when the steps would
        need more than ``memory_budget``.
    """
    check_integer(kept_per_step, "kept_per_step", minimum=0)
    losses_per_step = LOSS_STEP_BYTES + LOSS_SCHEDULE_BYTES * (len(schedules) if isinstance(schedules, list) else 0)
    plan = step_plan(schedules, memory_budget=memory_budget, kept_per_step=losses_per_step + kept_per_step)
    losses = []
    for step, phases in enumerate(plan):
        loss = np.asarray(gradient(step, phases), dtype=np.float64)
        running = [k for k, phase in enumerate(phases) if phase is not None]
        if not allow_non_finite and not np.all(np.isfinite(loss[running])):
            raise ValueError(f"the loss is not finite at step {step}: the step sizes are too large for this run")
        losses.append(loss)
        optimiser.update(phases)
    return np.array(losses)


def _rates(phase: Phase | None) -> tuple[float, float]:
    """(attention step size, output step size) of a phase; a finished schedule moves nothing."""
    return (0.0, 0.0) if phase is None else (phase.attention_lr, phase.output_lr)


class NumpyGradientDescent:
    """Plain gradient descent ``p <- p - lr * grad`` on numpy arrays, in place.

    ``attention[k]`` and ``output[k]`` are the arrays of the two groups of
    schedule k; :meth:`set_gradients` stores the gradients of the current step
    (same structure), :meth:`update` applies them with each schedule's phase.

    Parameters
    ----------
    attention : list of list of ndarray
        Per schedule, the float64 arrays of the attention group (updated in place).
    output : list of list of ndarray
        Per schedule, the float64 arrays of the output group, as many schedules as ``attention``.

    Raises
    ------
    ValueError
        If ``attention`` and ``output`` hold different numbers of schedules.
    """

    def __init__(self, attention: list[list[NDArray[np.float64]]], output: list[list[NDArray[np.float64]]]) -> None:
        if len(attention) != len(output):
            raise ValueError("attention and output must hold the groups of the same number of schedules")
        self.groups = [(list(a), list(o)) for a, o in zip(attention, output, strict=True)]
        self.gradients: list[tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]] | None = None

    def set_gradients(
        self, attention: list[list[NDArray[np.float64]]], output: list[list[NDArray[np.float64]]]
    ) -> None:
        """The gradients of the current step, structured as the parameters.

        Parameters
        ----------
        attention : list of list of ndarray
            Per schedule, the gradients of the attention group's arrays.
        output : list of list of ndarray
            Per schedule, the gradients of the output group's arrays.
        """
        self.gradients = [(list(a), list(o)) for a, o in zip(attention, output, strict=True)]

    def update(self, phases: tuple[Phase | None, ...]) -> None:
        """One step of every schedule with its phase's step sizes.

        Parameters
        ----------
        phases : tuple of (Phase or None)
            The phase of each schedule at this step (None: finished, not moved).

        Raises
        ------
        ValueError
            If :meth:`set_gradients` was not called since the last update.
        """
        if self.gradients is None:
            raise ValueError("set_gradients must be called before update")
        for (params, grads), phase in zip(zip(self.groups, self.gradients, strict=True), phases, strict=True):
            for group_params, group_grads, lr in zip(params, grads, _rates(phase), strict=True):
                if lr > 0:
                    for param, grad in zip(group_params, group_grads, strict=True):
                        param -= lr * grad
        self.gradients = None


class TorchGroupOptimiser:
    """Torch's SGD or Adam over the two parameter groups of each schedule.

    ``attention[k]`` and ``output[k]`` are the leaf tensors of schedule k; each
    becomes one parameter group of one ``torch.optim`` optimiser, whose step
    size :meth:`update` sets from the schedule's phase before every step.
    ``kind`` is "sgd" (``p <- p - lr grad``) or "adam" (``betas``, ``eps`` as in
    torch). Adam is elementwise, so a tensor holding several independent
    seeds along a leading dimension is updated exactly as each seed alone.

    Parameters
    ----------
    attention : list of list of torch.Tensor
        Per schedule (at least one), the leaf tensors (``requires_grad=True``) of the attention group.
    output : list of list of torch.Tensor
        Per schedule, the leaf tensors of the output group, as many schedules as ``attention``;
        no tensor in two groups.
    kind : {"sgd", "adam"}, optional
        The optimiser.
    betas : tuple of float, optional
        Adam's coefficients, as in torch.
    eps : float, optional
        Adam's eps, as in torch.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, the group lists are empty or of different lengths, or a tensor
        is in two groups.
    TypeError
        If a parameter is not a leaf tensor with ``requires_grad=True``.
    """

    def __init__(
        self,
        attention: list[list[torch.Tensor]],
        output: list[list[torch.Tensor]],
        kind: str = "sgd",
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        if kind not in OPTIMISERS:
            raise ValueError(f"kind must be one of {OPTIMISERS}, got {kind!r}")
        if len(attention) != len(output) or not attention:
            raise ValueError("attention and output must hold the groups of the same number (>= 1) of schedules")
        seen: set[int] = set()
        groups = []
        for group in [tensors for pair in zip(attention, output, strict=True) for tensors in pair]:
            tensors = list(group)
            for tensor in tensors:
                if not isinstance(tensor, torch.Tensor) or not tensor.requires_grad or not tensor.is_leaf:
                    raise TypeError("parameters must be leaf tensors with requires_grad=True")
                if id(tensor) in seen:
                    raise ValueError("a tensor appears in two parameter groups; the groups must be disjoint")
                seen.add(id(tensor))
            groups.append({"params": tensors, "lr": 0.0})
        self.kind = kind
        self.handed = False  # whether backward has handed over the gradients of the current step
        if kind == "sgd":
            self.optimiser: torch.optim.Optimizer = torch.optim.SGD(groups, lr=0.0, foreach=False)
        else:
            self.optimiser = torch.optim.Adam(groups, lr=0.0, betas=betas, eps=eps, foreach=False)

    def trained(self, phases: Sequence[Phase | None]) -> list[torch.Tensor]:
        """The tensors that the step with these phases moves (their groups' step sizes are > 0).

        Parameters
        ----------
        phases : sequence of (Phase or None)
            One entry per schedule.

        Returns
        -------
        list of torch.Tensor
            The trained tensors.

        Raises
        ------
        ValueError
            If ``phases`` does not hold one entry per schedule.
        """
        groups = self.optimiser.param_groups
        rates = [rate for phase in phases for rate in _rates(phase)]
        if len(rates) != len(groups):
            raise ValueError(f"phases must hold one entry per schedule ({len(groups) // 2}), got {len(phases)}")
        return [tensor for group, rate in zip(groups, rates, strict=True) if rate > 0 for tensor in group["params"]]

    def backward(self, loss: torch.Tensor, phases: Sequence[Phase | None]) -> None:
        """Set ``.grad`` of the trained tensors to the gradient of the scalar ``loss`` (the others get None).

        Parameters
        ----------
        loss : torch.Tensor
            A scalar.
        phases : sequence of (Phase or None)
            One entry per schedule.

        Raises
        ------
        ValueError
            If ``phases`` does not hold one entry per schedule.
        """
        trained = self.trained(phases)
        gradients = torch.autograd.grad(loss, trained, allow_unused=True) if trained else ()
        for group in self.optimiser.param_groups:
            for tensor in group["params"]:
                tensor.grad = None
        for tensor, grad in zip(trained, gradients, strict=True):
            tensor.grad = torch.zeros_like(tensor) if grad is None else grad
        self.handed = True

    def update(self, phases: Sequence[Phase | None]) -> None:
        """One optimiser step with each schedule's phase's step sizes; frozen groups are skipped.

        Parameters
        ----------
        phases : sequence of (Phase or None)
            One entry per schedule.

        Raises
        ------
        ValueError
            If :meth:`backward` was not called since the last update.
        """
        if not self.handed:
            raise ValueError("backward must be called before update")
        self.handed = False
        rates = [rate for phase in phases for rate in _rates(phase)]
        for group, rate in zip(self.optimiser.param_groups, rates, strict=True):
            group["lr"] = rate
            if rate == 0:
                for tensor in group["params"]:
                    tensor.grad = None
        self.optimiser.step()
        self.optimiser.zero_grad(set_to_none=True)


@dataclass
class Trajectory:
    """Per-step record of a run: row 0 is the initial point, row i the point after step i.

    ``horizon[i]`` is the exact recognition horizon (largest H with every string of
    length <= H right, capped at ``max_length``) and ``recognises[i]`` whether every
    string up to ``max_length`` is right.

    Attributes
    ----------
    theta : ndarray
        float64 (steps + 1, 2), the attention scores ordered (a, b).
    u : ndarray
        float64 (steps + 1, 2), the readout.
    loss : ndarray
        float64 (steps + 1,), the loss at each point.
    horizon : ndarray
        int64 (steps + 1,), the exact recognition horizon.
    recognises : ndarray
        bool (steps + 1,), whether every string up to ``max_length`` is right.
    phase_of_step : list of str, optional
        The group ("output", "attention", "joint") trained at each step.
    """

    theta: NDArray[np.float64]
    u: NDArray[np.float64]
    loss: NDArray[np.float64]
    horizon: NDArray[np.int64]
    recognises: NDArray[np.bool_]
    phase_of_step: list[str] = field(default_factory=list)

    @property
    def t(self) -> NDArray[np.float64]:
        """T = theta_b - theta_a along the run."""
        return self.theta[:, 1] - self.theta[:, 0]


class TrajectoryRecorder:
    """Collects the points of a run (parameters, loss, exact recognition verdict) into a
    :class:`Trajectory`; shared by the population runs of :mod:`lagtheory.population_gd` and the
    mini-batch runs of :mod:`lagtheory.sampled`.

    Parameters
    ----------
    max_length : int
        The largest length of the recognition verdicts, a whole number in [1, 1e18].
    scaling : {"log", "none"}
        The model's scaling.

    Raises
    ------
    ValueError
        If ``max_length`` or ``scaling`` is out of range.
    """

    def __init__(self, max_length: int, scaling: str) -> None:
        check_scaling(scaling)
        self.max_length, self.scaling = check_max_length(max_length), scaling
        self.thetas: list[NDArray[np.float64]] = []
        self.us: list[NDArray[np.float64]] = []
        self.losses: list[float] = []
        self.horizons: list[int] = []
        self.verdicts: list[bool] = []

    def record(self, theta: NDArray[np.float64], u: NDArray[np.float64], loss: float) -> None:
        """Add one point (the start, then the point after each step). ``theta`` and ``u`` are finite
        float64 vectors of length 2 (not checked: the runs check their starting point, and the steps
        keep it finite).

        Parameters
        ----------
        theta : ndarray
            float64 (2,), the attention scores.
        u : ndarray
            float64 (2,), the readout.
        loss : float
            The loss at the point.
        """
        verdict = _recognition_trusted(theta, u, self.max_length, self.scaling)
        self.thetas.append(np.array(theta, dtype=np.float64))
        self.us.append(np.array(u, dtype=np.float64))
        self.losses.append(loss)
        self.horizons.append(verdict.horizon)
        self.verdicts.append(verdict.recognises)

    def trajectory(self, phases: list[Phase]) -> Trajectory:
        """The recorded run of the schedule ``phases``: one point per step and the start, and the group
        that each step trains.

        Parameters
        ----------
        phases : list of Phase
            The schedule that was run.

        Returns
        -------
        Trajectory
            The run.

        Raises
        ------
        ValueError
            If the number of recorded points is not the schedule's steps plus one.
        """
        groups = [phase.group for phase in check_phases(phases) for _ in range(phase.steps)]
        if len(self.thetas) != len(groups) + 1:
            raise ValueError(f"{len(self.thetas)} points were recorded for a schedule of {len(groups)} steps")
        return Trajectory(
            theta=np.array(self.thetas),
            u=np.array(self.us),
            loss=np.array(self.losses),
            horizon=np.array(self.horizons, dtype=np.int64),
            recognises=np.array(self.verdicts),
            phase_of_step=groups,
        )
