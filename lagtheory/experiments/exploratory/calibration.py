"""The calibration of a study's base step sizes (:mod:`lagtheory.experiments.exploratory.design`).

**Base rates** (:func:`calibrate`), per task, optimiser and main-grid cell,
on calibration seeds disjoint from the study's (:data:`CALIBRATION_SEEDS`):
the rate of the optimiser's coarse grid (:data:`RATE_GRIDS`) with the
smallest training loss at the end of the budget, averaged (in log) over
joint *and* lag and the calibration seeds, among the rates at which none of
these runs diverged; the one-factor cells take the centre's rate. The rule
weighs joint and lag alike and looks at no test metric, so it favours
neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.cells import Task, run_rows
from ..parameters import fill_doc
from .design import RATIOS, READOUT_SCALES, Study, TaskDesign, main_level, training_config

CALIBRATION_SEEDS = tuple(range(10**6, 10**6 + 5))
"""The seeds of every calibration run, 1000000 to 1000004."""
RATE_GRIDS: Mapping[str, tuple[float, ...]] = {
    "sgd": tuple(10.0 ** (k / 2) for k in range(-6, 5)),
    "adam": tuple(10.0 ** (k / 2) for k in range(-8, 1)),
}
"""The coarse grids of base rates, per optimiser; 1e-3..100 for SGD, 1e-4..1 for Adam (an Adam step moves every coordinate by about the rate), sqrt(10) apart."""


def final_training_loss(losses: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per run: the mean training loss of the last tenth of the steps (NaN if any loss of the run is
    not finite).

    Parameters
    ----------
    losses : ndarray
        Training losses, the last axis the step (at least one step).

    Returns
    -------
    ndarray
        float64, the shape of ``losses`` without its last axis.
    """
    losses = np.asarray(losses, dtype=np.float64)
    tail = max(1, losses.shape[-1] // 10)
    finite = np.all(np.isfinite(losses), axis=-1)
    return np.where(finite, np.where(finite[..., None], losses, 0.0)[..., -tail:].mean(axis=-1), np.nan)


@fill_doc
def calibrate(
    the_study: Study,
    design: TaskDesign,
    optimiser: str,
    progress: Callable[[int], None] | None = None,
    task: Task | None = None,
    device: str = "cpu",
    levels: Sequence[tuple[float, float]] | None = None,
    keep_undefined: bool = False,
) -> dict[str, Any]:
    """The base rates of a task and optimiser (module docstring): every rate of the grid, joint and lag,
    every main-grid cell, the calibration seeds, in one batched run. For each main-grid cell (its level
    name) the chosen rate is the one with the smallest mean, over joint and lag and the calibration seeds,
    of log10 of the final training loss (:func:`final_training_loss`), among the rates at which none of
    these runs diverged. Returns the grid, the cells' levels, per (rate, cell) that mean (None where a run
    diverged) and the number of runs that diverged, and ``base_rates`` (level -> rate).

    Parameters
    ----------
    the_study : Study
        Builds the engine task (unless ``task`` is given).
    %(task_design)s
    optimiser : {"sgd", "adam"}
        The optimiser, a key of :data:`RATE_GRIDS`.
    %(progress)s
    task : Task, optional
        The engine task, if already built.
    device : str, optional
        Where the engine trains (:func:`lagtheory.experiments.engine.cells.run_rows`).
    levels : sequence of tuple of (float, float), optional
        The (readout scale, ratio) pairs calibrated, at least one (default the main grid's; the
        confirmatory study's validation cells give their own).
    keep_undefined : bool, optional
        A cell where some run diverges at every rate of the grid has no rate under the rule: False (default)
        raises; True gives it the base rate None (the confirmatory study's validation stage, which leaves such
        a cell out; ``book/registration.md``, Deviations).

    Returns
    -------
    dict
        ``rule``, ``grid``, ``levels``, ``mean_log10_final_training_loss`` (per rate and level,
        None where a run diverged), ``diverged_runs``, ``seeds`` and ``base_rates`` (level -> rate, or None
        for a cell without a rate when ``keep_undefined``).

    Raises
    ------
    ValueError
        If ``levels`` is empty, or every rate of the grid diverged in some cell and not ``keep_undefined``.
    KeyError
        If ``optimiser`` has no rate grid.
    """
    grid = RATE_GRIDS[optimiser]
    pairs = [(scale, ratio) for scale in READOUT_SCALES for ratio in RATIOS] if levels is None else list(levels)
    if not pairs:
        raise ValueError("levels must hold at least one (readout scale, ratio) pair")
    names = [main_level(scale, ratio) for scale, ratio in pairs]
    rows = []
    for rate in grid:
        for scale, ratio in pairs:
            config = training_config(design, optimiser, rate, scale, ratio)
            rows.extend((schedule, config) for schedule in ("joint", "lag"))
    task = the_study.build(design.name, design.setting) if task is None else task
    result = run_rows(task, rows, CALIBRATION_SEEDS, progress, evaluate=False, device=device)
    final = final_training_loss(result.losses).reshape(len(grid), len(names), -1)  # (rates, cells, runs)
    diverged = np.isnan(final).sum(axis=-1)
    with np.errstate(divide="ignore"):
        logs = np.log10(np.where(np.isnan(final), 1.0, final)).mean(axis=-1)
    mean_log = np.where(diverged == 0, logs, np.inf)
    defined = np.isfinite(mean_log).any(axis=0)
    if not keep_undefined and not np.all(defined):
        raise ValueError(f"every rate of the grid diverged in some cell for {design.name} with {optimiser}")
    chosen = np.argmin(mean_log, axis=0)
    return {
        "rule": (
            "per main-grid cell, the grid rate with the smallest mean log10 final training loss of joint and lag "
            "over the calibration seeds, among the rates at which none of these runs diverged"
        ),
        "grid": list(grid),
        "levels": names,
        "mean_log10_final_training_loss": [
            [float(value) if np.isfinite(value) else None for value in row] for row in mean_log
        ],
        "diverged_runs": diverged.astype(int).tolist(),
        "seeds": list(CALIBRATION_SEEDS),
        "base_rates": {
            level: float(grid[index]) if ok else None for level, index, ok in zip(names, chosen, defined, strict=True)
        },
    }
