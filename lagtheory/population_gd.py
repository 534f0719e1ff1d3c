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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_parameter_vector
from .data import Data, check_data
from .memory import MEMORY_BUDGET, check_memory_budget
from .population import Population, _population_trusted
from .schedules import Phase, check_phases
from .training import RECORD_STEP_BYTES, NumpyGradientDescent, Trajectory, TrajectoryRecorder, descend


# sampled.run_sampled repeats these keyword arguments on purpose: its counterpart with a batch size and a seed.
def run_schedule(
    phases: list[Phase],
    data: Data,
    *,
    theta0: ArrayLike = (0.0, 0.0),
    u0: ArrayLike = (0.0, 0.0),
    scaling: str = "log",
    max_length: int = 10**12,
    memory_budget: int = MEMORY_BUDGET,
) -> Trajectory:
    """Run the phases in order from (theta0, u0) by full-batch GD on the exact population
    loss :eq:`eq-population-loss` over the data distribution ``data`` (:class:`lagtheory.data.Data`,
    whose ``tol`` bounds the error of every gradient); the module docstring says how.

    Parameters
    ----------
    phases : list of Phase
        The schedule, a non-empty list of phases.
    data : Data
        The data distribution.
    theta0 : array_like, optional
        The initial attention scores, a finite vector of length 2 ordered (a, b).
    u0 : array_like, optional
        The initial readout, a finite vector of length 2 ordered (a, b).
    scaling : {"log", "none"}, optional
        The model's scaling.
    max_length : int, optional
        The largest length of the recognition verdicts, a whole number in [1, 1e18].
    memory_budget : int, optional
        The most bytes the run's record (:func:`lagtheory.schedules.step_plan`) and each population
        sum (:func:`lagtheory.population`) may take (:data:`lagtheory.memory.MEMORY_BUDGET` by
        default); refused before anything is allocated, naming the argument that drives it.

    Returns
    -------
    Trajectory
        The start and the point after every step.

    Raises
    ------
    ValueError
        If an argument is out of range, or the run leaves the finite range or its loss is not finite
        (step sizes too large).
    TypeError
        If ``data`` is not a :class:`~lagtheory.data.Data` or a vector is not numeric.
    """
    theta = check_parameter_vector(theta0, "theta0").copy()
    u = check_parameter_vector(u0, "u0").copy()
    check_phases(phases)
    data = check_data(data)
    memory_budget = check_memory_budget(memory_budget)
    recorder = TrajectoryRecorder(max_length, scaling)

    def exact() -> Population:
        # the arguments were checked above, once; a step can only leave the finite range by overflow
        if not (math.isfinite(theta[0]) and math.isfinite(theta[1]) and math.isfinite(u[0]) and math.isfinite(u[1])):
            raise ValueError(f"the run left the finite range (theta = {theta}, u = {u}): lower the step sizes")
        return _population_trusted(theta, u, data, scaling, "auto", memory_budget)

    optimiser = NumpyGradientDescent([[theta]], [[u]])

    def gradient(step: int, phases_now: tuple[Phase | None, ...]) -> NDArray[np.float64]:
        state = exact()
        recorder.record(theta, u, state.loss)
        optimiser.set_gradients([[state.grad_theta]], [[state.grad_u]])
        return np.array([state.loss])

    descend([phases], gradient, optimiser, memory_budget=memory_budget, kept_per_step=RECORD_STEP_BYTES)
    recorder.record(theta, u, exact().loss)
    return recorder.trajectory(phases)
