"""The step size, shown: failure and exact recognition against the base rate, for joint and lag, per task and
optimiser, from the confirmatory grid record.

The grid stage ran every confirmatory cell at every base rate of the registered grid, joint and lag (warm-up a
quarter of the budget), on the 100 confirmatory seeds. :func:`step_size_curves` pools the six registered
regimes of one task and optimiser (the centre, readout 1 and 3 at ratio 1 and 3, LP-FT: 600 paired runs per
schedule at every rate, each regime at every rate of the grid) and gives, per rate,

* joint's and lag's failure rate (and, for the languages, exact recognition rate), and
* the paired difference lag - joint with a 95% percentile interval from a bootstrap of the seeds
  (:func:`paired_interval`: a resampled seed keeps its six regimes, so the interval respects that one seed's
  runs in the six regimes share its initial draws and data);

and marks each regime's shared calibrated rate (the rate of the registered shared-rate comparisons) and each
schedule's best rate from the best record (tuned on the exploratory seeds by the registered rule; lag's best
may use a warm-up other than a quarter, which the grid's curves do not show). Exploratory description of
registered data: no test here is registered, and no verdict is drawn from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..parameters import fill_doc
from .analysis import _run_key
from .design import GRID_WARM_FRACTION

INTERVAL_RESAMPLES = 4000
"""Bootstrap resamples of the seeds for the paired intervals."""
OUTCOMES = {"failure": "failed", "recognition": "recognised"}
"""The outcomes drawn and the per-seed flag each reads."""


@fill_doc
def paired_interval(
    joint: ArrayLike, lag: ArrayLike, resamples: int = INTERVAL_RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """The difference of the rates lag - joint over (regimes, seeds) flags, with its 95% percentile interval
    from ``resamples`` bootstrap resamples of the seeds (a resampled seed keeps all its regimes;
    ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    joint, lag : array_like of bool
        The flags, (regimes, seeds), the same shape, paired by position.
    resamples : int, optional
        Resamples, >= 1 (default :data:`INTERVAL_RESAMPLES`).
    %(generator_seed)s

    Returns
    -------
    tuple of (float, float, float)
        The difference, the interval's lower and upper ends.

    Raises
    ------
    ValueError
        If the flags are not 2-d of the same shape or ``resamples`` < 1.
    """
    joint = np.asarray(joint, dtype=np.float64)
    lag = np.asarray(lag, dtype=np.float64)
    if joint.ndim != 2 or joint.shape != lag.shape:
        raise ValueError("joint and lag must be (regimes, seeds) arrays of the same shape")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    per_seed = (lag - joint).mean(axis=0)
    rng = np.random.default_rng(seed)
    draws = per_seed[rng.integers(0, per_seed.size, size=(resamples, per_seed.size))].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(per_seed.mean()), float(low), float(high)


@fill_doc
def step_size_curves(
    grid: Mapping[str, Any], best: Mapping[str, Any], task: str, optimiser: str, accounting: str = "total"
) -> dict[str, Any]:
    """The curves of one task and optimiser (module docstring), lag's runs under ``accounting``.

    Parameters
    ----------
    %(grid)s
    best : mapping
        The best stage's record (its ``choices``).
    task : str
        A confirmatory task.
    optimiser : str
        "sgd" or "adam".
    accounting : str, optional
        "total" (default) or "joint".

    Returns
    -------
    dict
        ``rates``, ``regimes`` (the cells pooled), per outcome of :data:`OUTCOMES` that the runs record
        (``recognition`` for the languages only) ``joint``, ``lag``, ``difference`` and ``interval`` per rate;
        ``calibrated`` (rate -> regimes whose shared rate it is), ``best_joint`` and ``best_lag`` (rate ->
        regimes whose best configuration uses it).

    Raises
    ------
    ValueError
        If no cell of the record has this task and optimiser.
    """
    cells = [name for name in grid["cells"] if name.split("/")[:2] == [task, optimiser]]
    if not cells:
        raise ValueError(f"no grid cell has task {task!r} and optimiser {optimiser!r}")
    rates = sorted({run["base_rate"] for run in grid["cells"][cells[0]]["runs"].values()})
    out: dict[str, Any] = {"rates": rates, "regimes": cells}
    for outcome, flag in OUTCOMES.items():
        first = grid["cells"][cells[0]]["runs"][_run_key("joint", rates[0], None, accounting)]["values"]
        if flag not in first:
            continue
        curve: dict[str, list] = {"joint": [], "lag": [], "difference": [], "interval": []}
        for rate in rates:
            joint = np.array(
                [grid["cells"][c]["runs"][_run_key("joint", rate, None, accounting)]["values"][flag] for c in cells]
            )
            lag = np.array(
                [
                    grid["cells"][c]["runs"][_run_key("lag", rate, GRID_WARM_FRACTION, accounting)]["values"][flag]
                    for c in cells
                ]
            )
            difference, low, high = paired_interval(joint, lag)
            curve["joint"].append(float(joint.mean()))
            curve["lag"].append(float(lag.mean()))
            curve["difference"].append(difference)
            curve["interval"].append([low, high])
        out[outcome] = curve
    out["calibrated"] = dict(Counter(grid["cells"][c]["shared_rate"] for c in cells))
    for schedule in ("joint", "lag"):
        out[f"best_{schedule}"] = dict(
            Counter(best["choices"][c][f"{schedule} {accounting}"]["base_rate"] for c in cells)
        )
    return out
