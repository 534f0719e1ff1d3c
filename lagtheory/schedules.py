"""Training protocols as sequences of gradient-descent phases on the exact
population loss (book eq. eq-population-loss), in the original coordinates
(theta, u): GD is not invariant under the change to (t, c, w), so it never
acts on those.

A phase trains the attention (theta), the output layer (u), or both, for a
number of full-batch steps with its own step sizes. The protocols of the book
(output-only, attention-only, one attention step then output, three-phase,
joint, two-timescale) are lists of phases; :func:`run_schedule` runs any list
and records the trajectory, including the exact recognition horizon after
every step (:func:`lagtheory.recognition`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_parameter_vector, check_positive, check_probability, check_scaling
from .counts import CountDistribution, resolve_counts
from .exact_recognition import check_max_length, recognition_trusted
from .lengths import LengthDistribution
from .population import Population, population_trusted

GROUPS = ("output", "attention", "joint")


@dataclass(frozen=True)
class Phase:
    """``steps`` full-batch GD steps on ``group`` ("output": u, "attention": theta,
    "joint": both) with step sizes ``lr_output`` on u and ``lr_attention`` on theta
    (the one not trained is ignored)."""

    group: str
    steps: int
    lr_output: float = 0.0
    lr_attention: float = 0.0

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"group must be one of {GROUPS}, got {self.group!r}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, (int, np.integer)) or self.steps < 0:
            raise ValueError(f"steps must be a whole number >= 0, got {self.steps!r}")
        for name in ("lr_output", "lr_attention"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.group in ("output", "joint") and self.lr_output <= 0:
            raise ValueError(f"lr_output must be > 0 for a phase that trains the output layer, got {self.lr_output!r}")
        if self.group in ("attention", "joint") and self.lr_attention <= 0:
            raise ValueError(
                f"lr_attention must be > 0 for a phase that trains the attention, got {self.lr_attention!r}"
            )


@dataclass
class Trajectory:
    """Per-step record of a run: row 0 is the initial point, row i the point after step i.

    ``horizon[i]`` is the exact recognition horizon (largest H with every string of
    length <= H right, capped at ``max_length``) and ``recognises[i]`` whether every
    string up to ``max_length`` is right.
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
    :class:`Trajectory`; shared by the population runs here and the mini-batch runs of
    :mod:`lagtheory.sampled`."""

    def __init__(self, max_length: int, scaling: str) -> None:
        check_scaling(scaling)
        self.max_length, self.scaling = check_max_length(max_length), scaling
        self.thetas: list[NDArray[np.float64]] = []
        self.us: list[NDArray[np.float64]] = []
        self.losses: list[float] = []
        self.horizons: list[int] = []
        self.verdicts: list[bool] = []
        self.labels: list[str] = []

    def record(self, theta: NDArray[np.float64], u: NDArray[np.float64], loss: float, group: str | None = None) -> None:
        """Add one point; ``group`` names the phase of the step that led to it (None for the start).
        ``theta`` and ``u`` are finite float64 vectors of length 2 (not checked: the runs check
        their starting point, and the steps keep it finite)."""
        verdict = recognition_trusted(theta, u, self.max_length, self.scaling)
        self.thetas.append(np.array(theta, dtype=np.float64))
        self.us.append(np.array(u, dtype=np.float64))
        self.losses.append(loss)
        self.horizons.append(verdict.horizon)
        self.verdicts.append(verdict.recognises)
        if group is not None:
            self.labels.append(group)

    def trajectory(self) -> Trajectory:
        return Trajectory(
            theta=np.array(self.thetas),
            u=np.array(self.us),
            loss=np.array(self.losses),
            horizon=np.array(self.horizons, dtype=np.int64),
            recognises=np.array(self.verdicts),
            phase_of_step=self.labels,
        )


def run_schedule(
    phases: list[Phase],
    lengths: LengthDistribution,
    theta0: ArrayLike = (0.0, 0.0),
    u0: ArrayLike = (0.0, 0.0),
    positives: str | CountDistribution = "one-b",
    prior: float = 0.5,
    scaling: str = "log",
    tol: float = 1e-12,
    max_length: int = 10**12,
) -> Trajectory:
    """Run the phases in order from (theta0, u0) by full-batch GD on the exact population loss."""
    theta = check_parameter_vector(theta0, "theta0").copy()
    u = check_parameter_vector(u0, "u0").copy()
    if not phases or not all(isinstance(phase, Phase) for phase in phases):
        raise ValueError("phases must be a non-empty list of Phase objects")
    if not isinstance(lengths, LengthDistribution):
        raise TypeError(
            f"lengths must be a LengthDistribution such as Geometric(mean) or PowerLaw(exponent), got {lengths!r}"
        )
    counts = resolve_counts(positives)
    tol = check_positive(tol, "tol")
    prior = check_probability(prior, "prior")
    recorder = TrajectoryRecorder(max_length, scaling)

    def exact(theta: NDArray[np.float64], u: NDArray[np.float64]) -> Population:
        # the arguments were checked above, once; a step can only leave the finite range by overflow
        if not (math.isfinite(theta[0]) and math.isfinite(theta[1]) and math.isfinite(u[0]) and math.isfinite(u[1])):
            raise ValueError(f"the run left the finite range (theta = {theta}, u = {u}): lower the step sizes")
        return population_trusted(theta, u, lengths, counts, tol, prior, scaling)

    state = exact(theta, u)
    recorder.record(theta, u, state.loss)
    for phase in phases:
        for _ in range(phase.steps):
            if phase.group in ("attention", "joint"):
                theta = theta - phase.lr_attention * state.grad_theta
            if phase.group in ("output", "joint"):
                u = u - phase.lr_output * state.grad_u
            state = exact(theta, u)
            recorder.record(theta, u, state.loss, phase.group)
    return recorder.trajectory()


def output_only(steps: int, lr: float) -> list[Phase]:
    """Train only u (theta stays at its initial value)."""
    return [Phase("output", steps, lr_output=lr)]


def attention_only(steps: int, lr: float) -> list[Phase]:
    """Train only theta (u frozen at its initial value)."""
    return [Phase("attention", steps, lr_attention=lr)]


def attention_step_then_output(eta_attention: float, steps: int, lr: float) -> list[Phase]:
    """One attention step of size eta_attention, then output-only training."""
    return [Phase("attention", 1, lr_attention=eta_attention), Phase("output", steps, lr_output=lr)]


def three_phase(eta1: float, eta2: float, steps3: int, lr3: float) -> list[Phase]:
    """Theorem thm-three-phase: one output step (eta1), one attention step (eta2),
    then ``steps3`` output steps of size lr3 with theta frozen."""
    return [
        Phase("output", 1, lr_output=eta1),
        Phase("attention", 1, lr_attention=eta2),
        Phase("output", steps3, lr_output=lr3),
    ]


def joint(steps: int, lr: float) -> list[Phase]:
    """Train theta and u together with one step size."""
    return [Phase("joint", steps, lr_output=lr, lr_attention=lr)]


def two_timescale(steps: int, lr: float, ratio: float) -> list[Phase]:
    """Joint training with the attention step size ``ratio`` times the output's
    (ratio < 1: attention lags; ratio > 1: attention leads)."""
    return [Phase("joint", steps, lr_output=lr, lr_attention=ratio * lr)]
