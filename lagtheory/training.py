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
  experiments of :mod:`lagtheory.experiments.engine` (autograd gradients,
  :class:`TorchGroupOptimiser`: torch's SGD or Adam with one parameter group
  per schedule and parameter group).

A group whose step size in the current phase is 0 is frozen exactly: its
gradient is not used (numpy) or set to None, so that torch's optimisers skip
it and leave its state (Adam's moments and step count) untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from numpy.typing import NDArray

from .schedules import Phase, step_plan

OPTIMISERS = ("sgd", "adam")

GradientOracle = Callable[[int, tuple[Phase | None, ...]], NDArray[np.float64]]
"""(step, the phase of each schedule) -> the loss of each schedule at the current parameters,
shape (schedules,) or (schedules, ...); the gradients are left for the update."""


def descend(
    schedules: list[list[Phase]], gradient: GradientOracle, update: Callable[[tuple[Phase | None, ...]], None]
) -> NDArray[np.float64]:
    """Run the schedules in lock-step; return the losses the oracle reported, shape (steps, schedules, ...).

    Step i calls ``gradient(i, phases)`` and then ``update(phases)``, with
    ``phases[k]`` the phase that step i of schedule k belongs to (None once
    schedule k has finished); the number of steps is that of the longest
    schedule (:func:`lagtheory.schedules.step_plan`).
    """
    plan = step_plan(schedules)
    losses = []
    for step, phases in enumerate(plan):
        loss = np.asarray(gradient(step, phases), dtype=np.float64)
        if not np.all(np.isfinite(loss[[k for k, phase in enumerate(phases) if phase is not None]])):
            raise ValueError(f"the loss is not finite at step {step}: the step sizes are too large for this run")
        losses.append(loss)
        update(phases)
    return np.array(losses)


def _rates(phase: Phase | None) -> tuple[float, float]:
    """(attention step size, output step size) of a phase; a finished schedule moves nothing."""
    return (0.0, 0.0) if phase is None else (phase.attention_lr, phase.output_lr)


class NumpyGradientDescent:
    """Plain gradient descent ``p <- p - lr * grad`` on numpy arrays, in place.

    ``attention[k]`` and ``output[k]`` are the arrays of the two groups of
    schedule k; :meth:`set_gradients` stores the gradients of the current step
    (same structure), :meth:`update` applies them with each schedule's phase.
    """

    def __init__(self, attention: list[list[NDArray[np.float64]]], output: list[list[NDArray[np.float64]]]) -> None:
        if len(attention) != len(output):
            raise ValueError("attention and output must hold the groups of the same number of schedules")
        self.groups = [(list(a), list(o)) for a, o in zip(attention, output, strict=True)]
        self.gradients: list[tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]] | None = None

    def set_gradients(
        self, attention: list[list[NDArray[np.float64]]], output: list[list[NDArray[np.float64]]]
    ) -> None:
        """The gradients of the current step, structured as the parameters."""
        self.gradients = [(list(a), list(o)) for a, o in zip(attention, output, strict=True)]

    def update(self, phases: tuple[Phase | None, ...]) -> None:
        """One step of every schedule with its phase's step sizes."""
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
        if kind == "sgd":
            self.optimiser: torch.optim.Optimizer = torch.optim.SGD(groups, lr=0.0, foreach=False)
        else:
            self.optimiser = torch.optim.Adam(groups, lr=0.0, betas=betas, eps=eps, foreach=False)

    def trained(self, phases: Sequence[Phase | None]) -> list[torch.Tensor]:
        """The tensors that the step with these phases moves (their groups' step sizes are > 0)."""
        groups = self.optimiser.param_groups
        rates = [rate for phase in phases for rate in _rates(phase)]
        if len(rates) != len(groups):
            raise ValueError(f"phases must hold one entry per schedule ({len(groups) // 2}), got {len(phases)}")
        return [tensor for group, rate in zip(groups, rates, strict=True) if rate > 0 for tensor in group["params"]]

    def backward(self, loss: torch.Tensor, phases: Sequence[Phase | None]) -> None:
        """Set ``.grad`` of the trained tensors to the gradient of the scalar ``loss`` (the others get None)."""
        trained = self.trained(phases)
        gradients = torch.autograd.grad(loss, trained, allow_unused=True) if trained else ()
        for group in self.optimiser.param_groups:
            for tensor in group["params"]:
                tensor.grad = None
        for tensor, grad in zip(trained, gradients, strict=True):
            tensor.grad = torch.zeros_like(tensor) if grad is None else grad

    def update(self, phases: Sequence[Phase | None]) -> None:
        """One optimiser step with each schedule's phase's step sizes; frozen groups are skipped."""
        rates = [rate for phase in phases for rate in _rates(phase)]
        for group, rate in zip(self.optimiser.param_groups, rates, strict=True):
            group["lr"] = rate
            if rate == 0:
                for tensor in group["params"]:
                    tensor.grad = None
        self.optimiser.step()
        self.optimiser.zero_grad(set_to_none=True)
