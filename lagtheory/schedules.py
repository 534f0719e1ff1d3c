"""Training schedules as sequences of phases: one catalogue for the theory
chapters and the experiments.

A :class:`Phase` is a number of gradient steps with one step size per
parameter group: ``attention_lr`` on the attention (theta, and the
first-position score s; the query or key-query matrix in the experiments) and
``output_lr`` on the output layer (u; the readout). A step size of 0 freezes
its group exactly. A schedule is a list of phases; the named schedules of the
book (:data:`AVAILABLE_SCHEDULES`, built by :func:`make_schedule`) are

* ``joint``: both groups throughout;
* ``lag``: the output layer alone for ``warm_steps`` steps, then joint
  (attention learning lags output learning);
* ``lead``: the attention alone for ``warm_steps`` steps, the output layer
  frozen at its initial value, then joint;
* ``one-step``: one attention step of size ``big_step``, then the output
  layer alone (:prf:ref:`thm-one-step`);
* ``three-phase``: one output step of size ``first_output_step``, one
  attention step of size ``big_step``, then the output layer alone
  (:prf:ref:`thm-three-phase`);
* ``two-timescale-r``: joint, with the attention step size multiplied by r;
* ``output-only`` and ``attention-only`` (:prf:ref:`thm-threshold`,
  :prf:ref:`thm-attention-only`).

The same phases drive the exact population gradient descent of the theory
(:func:`lagtheory.population_gd.run_schedule`, numpy), the mini-batch runs of
:mod:`lagtheory.sampled` and the seed-batched experiments of
:mod:`lagtheory.experiments.engine.cells` (torch SGD or Adam), all through the one
loop :func:`lagtheory.training.descend`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_integer, check_positive
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory

ACCOUNTINGS = ("total", "joint")
"""How the step budget T is counted; every schedule takes T steps in all ("total"),
or the last phase of every schedule takes T steps, after its warm-up ("joint")."""

TWO_TIMESCALE_PREFIX = "two-timescale-"
BOOK_SCHEDULES: tuple[str, ...] = (
    "joint",
    "lag",
    "lead",
    "one-step",
    "three-phase",
    "two-timescale-0.1",
    "two-timescale-0.3",
    "two-timescale-3",
)
"""The named schedules the book was written with, fixed; the exploratory studies compare them
(:data:`lagtheory.experiments.exploratory.design.COMPARED_SCHEDULES`) and the verdict's table lists them
(:data:`VERDICT_SCHEDULES`). A new schedule goes into :data:`AVAILABLE_SCHEDULES`, never here."""
AVAILABLE_SCHEDULES: tuple[str, ...] = BOOK_SCHEDULES
"""Every named schedule the experiments can run (any ``two-timescale-r`` with r > 0 is accepted too): the book's
(:data:`BOOK_SCHEDULES`) and any added after (``(*BOOK_SCHEDULES, "new")``). Which
ones a study compares is part of its design, frozen with its record
(:data:`lagtheory.experiments.exploratory.design.COMPARED_SCHEDULES`), and the verdict's exploratory history page's table has its
own fixed list (:data:`VERDICT_SCHEDULES`): a schedule added here changes no study and no table."""
THEORY_ONLY_NAMES: tuple[str, ...] = ("output-only", "attention-only")
"""The schedules of the theory chapters only (one group trained, the other frozen)."""
VERDICT_SCHEDULES: tuple[str, ...] = (*BOOK_SCHEDULES, *THEORY_ONLY_NAMES)
"""The rows of the table of the theory's schedules on the verdict's exploratory history page on the exact population loss, fixed (the
table's stored output lists exactly these): a schedule added to :data:`AVAILABLE_SCHEDULES` does not enter it."""


def _check_step_size(value: object, name: str) -> float:
    """A finite real step size >= 0 (0 freezes a group)."""
    if value == 0 and not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
        return 0.0
    return check_positive(value, name)


# Kept apart from certified.three_phase.PhaseTwo on purpose, alike in shape only (a frozen dataclass of named
# numbers): Phase is a training phase's steps and step sizes, PhaseTwo the certified constants of two phases.
@dataclass(frozen=True)
class Phase:
    """``steps`` gradient steps with step size ``attention_lr`` on the attention group and
    ``output_lr`` on the output group; a step size of 0 freezes that group exactly.

    Attributes
    ----------
    steps : int
        The number of steps, an integer >= 0.
    attention_lr : float
        The attention's step size, finite and >= 0.
    output_lr : float
        The output layer's step size, finite and >= 0; not both 0.

    Raises
    ------
    ValueError
        If ``steps`` or a step size is out of range, or both step sizes are 0.
    TypeError
        If ``steps`` is not an integer or a step size not a real number.
    """

    steps: int
    attention_lr: float
    output_lr: float

    def __post_init__(self) -> None:
        check_integer(self.steps, "steps", minimum=0)
        _check_step_size(self.attention_lr, "attention_lr")
        _check_step_size(self.output_lr, "output_lr")
        if self.attention_lr == 0 and self.output_lr == 0:
            raise ValueError("attention_lr and output_lr must not both be 0 (a phase must train something)")

    @property
    def group(self) -> str:
        """The groups this phase trains; "output", "attention" or "joint"."""
        if self.attention_lr == 0:
            return "output"
        return "attention" if self.output_lr == 0 else "joint"


# -- the named schedules --------------------------------------------------------


def joint(steps: int, lr: float, attention_lr: float | None = None) -> list[Phase]:
    """Train both groups together; the attention's step size is ``attention_lr`` (default ``lr``).

    Parameters
    ----------
    steps : int
        The number of steps, an integer >= 0.
    lr : float
        The step size (the output layer's), finite and >= 0.
    attention_lr : float, optional
        The attention's step size, finite and >= 0 (default ``lr``); not both 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(steps, lr if attention_lr is None else attention_lr, lr)]


def two_timescale(steps: int, lr: float, ratio: float) -> list[Phase]:
    """Joint training with the attention step size ``ratio`` times the output's
    (ratio < 1: attention lags; ratio > 1: attention leads).

    Parameters
    ----------
    steps : int
        The number of steps, an integer >= 0.
    lr : float
        The output layer's step size, finite and > 0.
    ratio : float
        The attention's step size over the output's, finite and > 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    check_positive(ratio, "ratio")
    return [Phase(steps, ratio * lr, lr)]


def lag(warm_steps: int, steps: int, lr: float, attention_lr: float | None = None) -> list[Phase]:
    """The output layer alone for ``warm_steps`` steps, then ``steps`` joint steps.

    Parameters
    ----------
    warm_steps : int
        The steps of the warm-up, an integer >= 0.
    steps : int
        The joint steps, an integer >= 0.
    lr : float
        The output layer's step size, finite and > 0.
    attention_lr : float, optional
        The attention's step size in the joint phase, finite and >= 0 (default ``lr``).

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(warm_steps, 0.0, lr), Phase(steps, lr if attention_lr is None else attention_lr, lr)]


def lead(warm_steps: int, steps: int, lr: float, attention_lr: float | None = None) -> list[Phase]:
    """The attention alone for ``warm_steps`` steps (output frozen), then ``steps`` joint steps.

    Parameters
    ----------
    warm_steps : int
        The steps of the warm-up, an integer >= 0.
    steps : int
        The joint steps, an integer >= 0.
    lr : float
        The output layer's step size in the joint phase, finite and >= 0.
    attention_lr : float, optional
        The attention's step size in both phases, finite and > 0 (default ``lr``).

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    attention = lr if attention_lr is None else attention_lr
    return [Phase(warm_steps, attention, 0.0), Phase(steps, attention, lr)]


def one_step(big_step: float, steps: int, lr: float) -> list[Phase]:
    """One attention step of size ``big_step``, then ``steps`` output-only steps of size ``lr``.

    Parameters
    ----------
    big_step : float
        The attention step, finite and > 0.
    steps : int
        The output-only steps, an integer >= 0.
    lr : float
        The output layer's step size, finite and > 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(1, big_step, 0.0), Phase(steps, 0.0, lr)]


def three_phase(eta1: float, eta2: float, steps3: int, lr3: float) -> list[Phase]:
    """:prf:ref:`thm-three-phase`: one output step (eta1), one attention step (eta2),
    then ``steps3`` output steps of size lr3 with theta frozen.

    Parameters
    ----------
    eta1 : float
        The first output step, finite and > 0.
    eta2 : float
        The attention step, finite and > 0.
    steps3 : int
        The output steps of phase 3, an integer >= 0.
    lr3 : float
        Their step size, finite and > 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(1, 0.0, eta1), Phase(1, eta2, 0.0), Phase(steps3, 0.0, lr3)]


def output_only(steps: int, lr: float) -> list[Phase]:
    """Train only the output layer (the attention stays at its initial value).

    Parameters
    ----------
    steps : int
        The number of steps, an integer >= 0.
    lr : float
        The output layer's step size, finite and > 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(steps, 0.0, lr)]


def attention_only(steps: int, lr: float) -> list[Phase]:
    """Train only the attention (the output layer frozen at its initial value).

    Parameters
    ----------
    steps : int
        The number of steps, an integer >= 0.
    lr : float
        The attention's step size, finite and > 0.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If a count or step size is out of range (as :class:`Phase` checks).
    TypeError
        If a count is not an integer or a step size not a real number.
    """
    return [Phase(steps, lr, 0.0)]


@dataclass(frozen=True)
class ScheduleSettings:
    """What a named schedule needs: the step budget ``steps`` (T), the base step sizes
    ``attention_lr`` and ``output_lr`` of the two groups, ``warm_steps`` for lag and lead,
    ``big_step`` for the single attention step of one-step and three-phase,
    ``first_output_step`` for three-phase's first step (None: ``output_lr``) and the step
    ``accounting`` (:data:`ACCOUNTINGS`).

    Attributes
    ----------
    steps : int
        The budget T, an integer >= 1 (>= 3 under ``"total"``).
    attention_lr, output_lr : float
        The base step sizes, finite and > 0.
    warm_steps : int
        The warm-up of lag and lead, an integer >= 1 (below ``steps`` under ``"total"``).
    big_step : float
        The single attention step of one-step and three-phase, finite and > 0.
    first_output_step : float or None, optional
        Three-phase's first output step, finite and > 0 (None: ``output_lr``).
    accounting : {"total", "joint"}, optional
        The step accounting.

    Raises
    ------
    ValueError
        If a field is out of range.
    TypeError
        If a count is not an integer or a step size not a real number.
    """

    steps: int
    attention_lr: float
    output_lr: float
    warm_steps: int
    big_step: float
    first_output_step: float | None = None
    accounting: str = "total"

    def __post_init__(self) -> None:
        check_integer(self.steps, "steps", minimum=1)
        check_positive(self.attention_lr, "attention_lr")
        check_positive(self.output_lr, "output_lr")
        check_integer(self.warm_steps, "warm_steps", minimum=1)
        check_positive(self.big_step, "big_step")
        if self.first_output_step is not None:
            check_positive(self.first_output_step, "first_output_step")
        if self.accounting not in ACCOUNTINGS:
            raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {self.accounting!r}")
        if self.accounting == "total" and self.warm_steps >= self.steps:
            raise ValueError(
                f"warm_steps must satisfy 1 <= warm_steps < steps = {self.steps} under equal total steps, "
                f"got {self.warm_steps}"
            )
        if self.accounting == "total" and self.steps < 3:
            raise ValueError(f"steps must be >= 3 under equal total steps (three-phase takes 2 + 1), got {self.steps}")


def two_timescale_ratio(name: str) -> float:
    """The ratio r of a schedule named ``two-timescale-r``.

    Parameters
    ----------
    name : str
        ``"two-timescale-r"`` with r a finite number > 0.

    Returns
    -------
    float
        r.

    Raises
    ------
    ValueError
        If ``name`` is not of that form.
    """
    if not isinstance(name, str) or not name.startswith(TWO_TIMESCALE_PREFIX):
        raise ValueError(f"name must be 'two-timescale-r' with r > 0, got {name!r}")
    try:
        ratio = float(name[len(TWO_TIMESCALE_PREFIX) :])
    except ValueError as error:
        raise ValueError(f"name must be 'two-timescale-r' with a number r > 0, got {name!r}") from error
    if not math.isfinite(ratio) or ratio <= 0:
        raise ValueError(f"name must be 'two-timescale-r' with a finite r > 0, got {name!r}")
    return ratio


def check_schedule_name(name: object) -> str:
    """A schedule name, checked.

    Parameters
    ----------
    name : object
        A name of :data:`AVAILABLE_SCHEDULES`, ``two-timescale-r`` (r > 0) or one of :data:`THEORY_ONLY_NAMES`.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        If it is not a schedule's name.
    """
    if not isinstance(name, str):
        raise TypeError(
            f"name must be a str, one of {AVAILABLE_SCHEDULES + THEORY_ONLY_NAMES}, got {type(name).__name__}"
        )
    if name.startswith(TWO_TIMESCALE_PREFIX):
        two_timescale_ratio(name)
    elif name not in AVAILABLE_SCHEDULES + THEORY_ONLY_NAMES:
        raise ValueError(
            f"name must be one of {AVAILABLE_SCHEDULES + THEORY_ONLY_NAMES} or 'two-timescale-r', got {name!r}"
        )
    return name


def make_schedule(name: str, settings: ScheduleSettings) -> list[Phase]:
    """The phases of the schedule ``name`` (module docstring) under ``settings``.

    Under ``accounting="total"`` every schedule takes ``settings.steps`` steps in
    all (the warm-up of lag and lead, and the single steps of one-step and
    three-phase, come out of the budget); under ``"joint"`` the last phase takes
    ``settings.steps`` steps and the steps before it are extra.

    Parameters
    ----------
    name : str
        A schedule name (:func:`check_schedule_name`).
    settings : ScheduleSettings
        The budget, step sizes and accounting.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If ``name`` is not a schedule's name.
    TypeError
        If ``name`` is not a str or ``settings`` not a ScheduleSettings.
    """
    check_schedule_name(name)
    if not isinstance(settings, ScheduleSettings):
        raise TypeError(f"settings must be a ScheduleSettings, got {type(settings).__name__}")
    s = settings
    total = s.accounting == "total"
    a, o = s.attention_lr, s.output_lr
    if name == "joint":
        return joint(s.steps, o, attention_lr=a)
    if name.startswith(TWO_TIMESCALE_PREFIX):
        return joint(s.steps, o, attention_lr=two_timescale_ratio(name) * a)
    if name == "output-only":
        return output_only(s.steps, o)
    if name == "attention-only":
        return attention_only(s.steps, a)
    if name in ("lag", "lead"):
        rest = s.steps - s.warm_steps if total else s.steps
        return (lag if name == "lag" else lead)(s.warm_steps, rest, o, attention_lr=a)
    if name == "one-step":
        return one_step(s.big_step, s.steps - 1 if total else s.steps, o)
    first = o if s.first_output_step is None else s.first_output_step
    return three_phase(first, s.big_step, s.steps - 2 if total else s.steps, o)


def check_phases(phases: object, name: str = "phases") -> list[Phase]:
    """A non-empty list of Phase objects, checked.

    Parameters
    ----------
    phases : object
        The phases.
    name : str, optional
        How they are named in the error message.

    Returns
    -------
    list of Phase
        The phases.

    Raises
    ------
    ValueError
        If ``phases`` is not a non-empty list of :class:`Phase`.
    """
    if not isinstance(phases, list) or not phases or not all(isinstance(phase, Phase) for phase in phases):
        raise ValueError(f"{name} must be a non-empty list of Phase objects")
    return phases


STEP_BYTES = 64
"""Bytes per step of a plan of :func:`step_plan` whatever its number of schedules (its row's tuple and the
list's reference to it), an upper bound: measured 48 (tracemalloc; benchmarks/bench.py's memory rows). With
``SCHEDULE_STEP_BYTES`` per schedule and step, the estimate :func:`step_plan` compares with its
``memory_budget``."""
SCHEDULE_STEP_BYTES = 24
"""Bytes per schedule and step of a plan (the row's reference and the list of each schedule's steps while the
rows are built), an upper bound: measured 16."""


def step_plan(
    schedules: list[list[Phase]], *, memory_budget: int = MEMORY_BUDGET, kept_per_step: int = 0
) -> list[tuple[Phase | None, ...]]:
    """Step by step, the phase of each schedule (None once a schedule has finished):
    row i holds the phases that step i of every schedule belongs to.

    Parameters
    ----------
    schedules : list of list of Phase
        A non-empty list of schedules.
    memory_budget : int, optional
        The most bytes the plan, ``STEP_BYTES`` a step and ``SCHEDULE_STEP_BYTES`` a step of each schedule,
        and what its caller keeps per step may take (:data:`lagtheory.memory.MEMORY_BUDGET` by
        default). Keyword only.
    kept_per_step : int, optional
        The bytes the caller keeps per step beside the plan (a run's losses and recorded points:
        :func:`lagtheory.training.descend`), >= 0; 0 by default (the plan alone). Keyword only.

    Returns
    -------
    list of tuple
        Row i: the :class:`Phase` (or None) of every schedule at step i.

    Raises
    ------
    ValueError
        If ``schedules`` is empty or a schedule is not a non-empty list of phases; before anything
        is allocated, when the steps would need more than ``memory_budget``, naming the steps.
    """
    if not isinstance(schedules, list) or not schedules:
        raise ValueError("schedules must be a non-empty list of lists of Phase objects")
    longest = max(sum(phase.steps for phase in check_phases(phases, "schedules[i]")) for phases in schedules)
    memory_budget = check_memory_budget(memory_budget)
    check_integer(kept_per_step, "kept_per_step", minimum=0)
    per_step = STEP_BYTES + SCHEDULE_STEP_BYTES * len(schedules) + kept_per_step
    require_memory(
        longest * per_step,
        memory_budget,
        f"a run of {longest:.3g} steps of {len(schedules)} schedule(s) (the steps of its phases)",
        f"at most {memory_budget // per_step:.3g} steps",
    )
    per_schedule = [
        [phase for phase in check_phases(phases, "schedules[i]") for _ in range(phase.steps)] for phases in schedules
    ]
    return [tuple(steps[i] if i < len(steps) else None for steps in per_schedule) for i in range(longest)]
