"""Full-batch gradient descent on the exact population loss (book eq.
:eq:`eq-population-loss`) along a schedule of :mod:`lagtheory.schedules`, recording
the trajectory with the exact recognition verdict after every step.

The runs act in the original coordinates (theta, u): GD is not invariant
under the change to (t, c, w), so it never acts on those. The loop is
:func:`lagtheory.training.descend`, the one loop of every training path, with
the exact gradients of :func:`lagtheory.population` (its trusted inner path: the
arguments are checked once per run) as its gradient oracle and
plain gradient descent (:class:`lagtheory.training.NumpyGradientDescent`) as
its update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_parameter_vector, check_scaling
from .data import Data, check_data
from .exact_recognition import _recognition_trusted, check_max_length
from .population import Population, _population_trusted
from .schedules import Phase, check_phases
from .training import NumpyGradientDescent, descend


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
        verdict = _recognition_trusted(theta, u, self.max_length, self.scaling)
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
    data: Data,
    *,
    theta0: ArrayLike = (0.0, 0.0),
    u0: ArrayLike = (0.0, 0.0),
    scaling: str = "log",
    max_length: int = 10**12,
) -> Trajectory:
    """Run the phases in order from (theta0, u0) by full-batch GD on the exact population
    loss :eq:`eq-population-loss` over the data distribution ``data`` (:class:`lagtheory.data.Data`,
    whose ``tol`` bounds the error of every gradient); the module docstring says how."""
    theta = check_parameter_vector(theta0, "theta0").copy()
    u = check_parameter_vector(u0, "u0").copy()
    check_phases(phases)
    data = check_data(data)
    recorder = TrajectoryRecorder(max_length, scaling)

    def exact() -> Population:
        # the arguments were checked above, once; a step can only leave the finite range by overflow
        if not (math.isfinite(theta[0]) and math.isfinite(theta[1]) and math.isfinite(u[0]) and math.isfinite(u[1])):
            raise ValueError(f"the run left the finite range (theta = {theta}, u = {u}): lower the step sizes")
        return _population_trusted(theta, u, data, scaling)

    optimiser = NumpyGradientDescent([[theta]], [[u]])
    previous: list[str | None] = [None]

    def gradient(step: int, phases_now: tuple[Phase | None, ...]) -> NDArray[np.float64]:
        state = exact()
        recorder.record(theta, u, state.loss, previous[0])
        optimiser.set_gradients([[state.grad_theta]], [[state.grad_u]])
        previous[0] = phases_now[0].group
        return np.array([state.loss])

    descend([phases], gradient, optimiser.update)
    state = exact()
    recorder.record(theta, u, state.loss, previous[0])
    return recorder.trajectory()
