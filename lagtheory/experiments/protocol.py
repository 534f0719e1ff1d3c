"""The shared training protocol of the empirical chapters (languages,
regression, in-context learning): learning-rate schedules over two parameter
groups, the attention and the output layer, and one training loop that runs
any of them.

A schedule is a list of :class:`TrainPhase` (a number of steps and one step
size per group; a step size of 0 freezes that group). The schedules compared
in the book (all with ``total_steps`` steps in all):

* ``joint``: both groups with step size ``lr`` throughout;
* ``lag``: the output layer alone for ``warm_steps`` steps, then joint
  (attention learning lags output learning);
* ``lead``: the attention alone for ``warm_steps`` steps, the output layer
  frozen at its initial value, then joint;
* ``one-step``: one attention step of size ``big_step`` (output frozen), then
  the output layer alone (the one-step feature-learning protocol of
  ``thm-one-step``);
* ``two-timescale-r`` for r in (0.1, 0.3, 3): joint, with step size ``r * lr``
  on the attention and ``lr`` on the output layer.

Each empirical chapter condenses its measurements into a summary file
``book/data/summary_<task>.json`` (:func:`summary_entry`,
:func:`freeze_summary`, :func:`load_summary`) in the format

    {"task": str, "metric": str, "higher_is_better": bool,
     "schedules": {name: {"mean": float, "std": float, "seeds": int}},
     "per_language": {...} (optional)}

with every float rounded to 3 decimals; the verdict chapter reads them.

The optimiser is plain (stochastic) gradient descent, the same for every
schedule: ``param <- param - step_size * grad``. We chose SGD over Adam
because the theory is about gradient steps: "one attention step of size
``big_step``" has a meaning only for SGD, and Adam's per-coordinate
normalisation would turn the tiny attention gradient that the output layer
produces before it has learnt (``lem-gradients``: dL/dtheta = 0 when u_a =
u_b) into a full-size step, hiding the very effect the schedules compare.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer

SCHEDULE_NAMES: tuple[str, ...] = (
    "joint",
    "lag",
    "lead",
    "one-step",
    "two-timescale-0.1",
    "two-timescale-0.3",
    "two-timescale-3",
)

_TWO_TIMESCALE_PREFIX = "two-timescale-"


@dataclass(frozen=True)
class TrainPhase:
    """``steps`` SGD steps with step size ``attention_lr`` on the attention group and
    ``output_lr`` on the output group; a step size of 0 freezes its group exactly."""

    steps: int
    attention_lr: float  # 0 freezes the attention group
    output_lr: float  # 0 freezes the output group

    def __post_init__(self) -> None:
        check_integer(self.steps, "steps", minimum=1)
        for name in ("attention_lr", "output_lr"):
            _check_real(getattr(self, name), name, allow_zero=True)
        if self.attention_lr == 0 and self.output_lr == 0:
            raise ValueError("attention_lr and output_lr must not both be 0 (a phase must train something)")


def make_schedule(name: str, total_steps: int, lr: float, warm_steps: int, big_step: float) -> list[TrainPhase]:
    """The phases of schedule ``name`` (one of :data:`SCHEDULE_NAMES`), ``total_steps`` steps in all.

    ``lr`` is the base step size, ``warm_steps`` the length of the first
    (single-group) phase of ``lag`` and ``lead`` (1 <= warm_steps <
    total_steps, so that a joint phase follows), ``big_step`` the size of the
    single attention step of ``one-step``. Every argument is checked for every
    name, so that a sweep over the names fails on the first bad argument.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, one of {SCHEDULE_NAMES}, got {type(name).__name__}")
    if name not in SCHEDULE_NAMES:
        raise ValueError(f"name must be one of {SCHEDULE_NAMES}, got {name!r}")
    check_integer(total_steps, "total_steps", minimum=2)
    _check_real(lr, "lr", allow_zero=False)
    check_integer(warm_steps, "warm_steps", minimum=1)
    if warm_steps >= total_steps:
        raise ValueError(f"warm_steps must satisfy 1 <= warm_steps < total_steps = {total_steps}, got {warm_steps}")
    _check_real(big_step, "big_step", allow_zero=False)

    joint_rest = TrainPhase(total_steps - warm_steps, attention_lr=lr, output_lr=lr)
    if name == "joint":
        return [TrainPhase(total_steps, attention_lr=lr, output_lr=lr)]
    if name == "lag":
        return [TrainPhase(warm_steps, attention_lr=0.0, output_lr=lr), joint_rest]
    if name == "lead":
        return [TrainPhase(warm_steps, attention_lr=lr, output_lr=0.0), joint_rest]
    if name == "one-step":
        return [TrainPhase(1, attention_lr=big_step, output_lr=0.0), TrainPhase(total_steps - 1, 0.0, lr)]
    ratio = float(name[len(_TWO_TIMESCALE_PREFIX) :])
    return [TrainPhase(total_steps, attention_lr=ratio * lr, output_lr=lr)]


def train(
    attention_params: list[torch.nn.Parameter],
    output_params: list[torch.nn.Parameter],
    phases: list[TrainPhase],
    loss_fn: Callable[[int], torch.Tensor],
) -> NDArray[np.float64]:
    """Run the phases with plain SGD, in place; return the loss of every step, shape (total steps,).

    Step ``i`` (0-based, counted across phases) evaluates ``loss = loss_fn(i)``
    at the current parameters, records it, and updates each group whose step
    size in the current phase is positive: ``p <- p - lr * dloss/dp``. A group
    with step size 0 is not touched at all (its values stay bit-for-bit
    equal). A parameter that the loss does not depend on gets gradient 0.
    The two groups must be disjoint. A loss that is not a finite real scalar
    raises ValueError naming the step.
    """
    _check_parameter_list(attention_params, "attention_params")
    _check_parameter_list(output_params, "output_params")
    attention_ids = {id(p) for p in attention_params}
    if any(id(p) in attention_ids for p in output_params):
        raise ValueError("attention_params and output_params must be disjoint (a parameter is in both)")
    if not isinstance(phases, list) or not phases:
        raise ValueError("phases must be a non-empty list of TrainPhase")
    for phase in phases:
        if not isinstance(phase, TrainPhase):
            raise TypeError(f"phases must contain TrainPhase objects, got {type(phase).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable (step -> scalar loss tensor), got {type(loss_fn).__name__}")

    losses = np.empty(sum(phase.steps for phase in phases), dtype=np.float64)
    step = 0
    for phase in phases:
        groups = [(attention_params, phase.attention_lr), (output_params, phase.output_lr)]
        active = [(params, lr) for params, lr in groups if lr > 0]
        trained = [p for params, _ in active for p in params]
        for _ in range(phase.steps):
            loss = loss_fn(step)
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                raise ValueError(f"loss_fn must return a scalar tensor, got {type(loss).__name__} at step {step}")
            value = float(loss.detach())
            if not math.isfinite(value):
                raise ValueError(f"loss_fn returned a non-finite loss {value!r} at step {step}")
            losses[step] = value
            gradients = torch.autograd.grad(loss, trained, allow_unused=True)
            with torch.no_grad():
                index = 0
                for params, lr in active:
                    for param in params:
                        gradient = gradients[index]
                        index += 1
                        if gradient is not None:
                            param.sub_(lr * gradient)
            step += 1
    return losses


SUMMARY_DECIMALS = 3


def summary_entry(values: Sequence[float]) -> dict[str, float | int]:
    """``{"mean", "std", "seeds"}`` of one schedule's per-seed values: the mean, the sample standard
    deviation (ddof = 1; 0 for a single value) and the number of values, floats rounded to 3 decimals."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError(f"values must be a non-empty 1-d sequence of finite numbers, got {values!r}")
    spread = float(np.std(array, ddof=1)) if array.size > 1 else 0.0
    return {"mean": _round(float(np.mean(array))), "std": _round(spread), "seeds": int(array.size)}


def freeze_summary(summary: dict[str, Any], path: str | Path) -> None:
    """Write ``summary`` to ``path`` (JSON) if the file does not exist; then assert that the file equals it.

    So the first run of a chapter records its summary and every later run
    checks that it still computes exactly the recorded numbers: the file can
    never drift from the chapter. To refresh it, delete the file and re-run.
    Floats must already be rounded (``summary_entry``); the format is checked
    (:func:`validate_summary`). A mismatch raises AssertionError naming the file.
    """
    validate_summary(summary, "summary")
    path = Path(path)
    fresh = json.loads(json.dumps(summary))
    if not path.exists():
        path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    recorded = json.loads(path.read_text())
    assert recorded == fresh, (
        f"{path} differs from the summary computed now; if the change is intended, delete {path} and re-run"
    )


def load_summary(path: str | Path) -> dict[str, Any]:
    """Read a summary file and check its format (:func:`validate_summary`)."""
    summary = json.loads(Path(path).read_text())
    validate_summary(summary, str(path))
    return summary


def validate_summary(summary: Any, name: str) -> None:
    """Check the summary format of the module docstring; ValueError naming ``name`` and the bad field."""
    if not isinstance(summary, dict):
        raise ValueError(f"{name} must be a JSON object (dict), got {type(summary).__name__}")
    for key, kind in (("task", str), ("metric", str), ("higher_is_better", bool), ("schedules", dict)):
        if not isinstance(summary.get(key), kind):
            raise ValueError(f"{name} must have a field {key!r} of type {kind.__name__}")
    if not summary["schedules"]:
        raise ValueError(f"{name} must have at least one schedule in 'schedules'")
    for schedule, entry in summary["schedules"].items():
        if not isinstance(entry, dict) or set(entry) != {"mean", "std", "seeds"}:
            raise ValueError(f"{name}: schedules[{schedule!r}] must have exactly the fields mean, std, seeds")
        numbers_ok = all(isinstance(entry[k], (int, float)) and not isinstance(entry[k], bool) for k in ("mean", "std"))
        if not numbers_ok or not all(math.isfinite(entry[k]) for k in ("mean", "std")) or entry["std"] < 0:
            raise ValueError(f"{name}: schedules[{schedule!r}] must have finite mean and std >= 0")
        if isinstance(entry["seeds"], bool) or not isinstance(entry["seeds"], int) or entry["seeds"] < 1:
            raise ValueError(f"{name}: schedules[{schedule!r}]['seeds'] must be an integer >= 1")


def lag_verdict(lag: dict[str, float], joint: dict[str, float], higher_is_better: bool) -> str:
    """Whether lag helped against joint, by the rule of the empirical chapters.

    With ``spread = max(lag std, joint std, 0.001)`` (0.001: the summary
    files' resolution) and ``gain`` = lag mean - joint mean (negated when
    lower is better): "helped" if gain > spread, "hurt" if gain < -spread,
    otherwise "no measurable difference". Entries are summary entries
    (``{"mean", "std", ...}``).
    """
    for name, entry in (("lag", lag), ("joint", joint)):
        if not isinstance(entry, dict) or not {"mean", "std"} <= set(entry):
            raise ValueError(f"{name} must be a summary entry with fields mean and std, got {entry!r}")
    if not isinstance(higher_is_better, bool):
        raise TypeError(f"higher_is_better must be True or False, got {higher_is_better!r}")
    spread = max(lag["std"], joint["std"], 10.0**-SUMMARY_DECIMALS)
    gain = (lag["mean"] - joint["mean"]) * (1 if higher_is_better else -1)
    if gain > spread:
        return "helped"
    if gain < -spread:
        return "hurt"
    return "no measurable difference"


def _round(value: float) -> float:
    """Round to the summary files' resolution; -0.0 becomes 0.0 so that the JSON text is stable."""
    return round(value, SUMMARY_DECIMALS) + 0.0


def _check_parameter_list(params: object, name: str) -> None:
    """A non-empty list of leaf tensors that require gradients."""
    if not isinstance(params, list) or not params:
        raise ValueError(f"{name} must be a non-empty list of torch.nn.Parameter")
    for param in params:
        if not isinstance(param, torch.Tensor) or not param.requires_grad or not param.is_leaf:
            raise TypeError(f"{name} must contain leaf tensors with requires_grad=True (torch.nn.Parameter)")


def _check_real(value: object, name: str, allow_zero: bool) -> None:
    """A finite real number, > 0 (or >= 0 when allow_zero)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    bound = ">= 0" if allow_zero else "> 0"
    if not math.isfinite(float(value)) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


def step_generator(seed: int, step: int) -> torch.Generator:
    """A torch generator seeded by the pair ``(seed, step)`` through numpy's
    ``SeedSequence``, so that step ``step`` of every schedule run with ``seed``
    sees the same data."""
    for value, name in ((seed, "seed"), (step, "step")):
        check_integer(value, name, minimum=0)
    state = np.random.SeedSequence([seed, step]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator().manual_seed(int(state))
