"""The decomposed outcomes of an exploratory record (the definitions the registration adopts,
``book/registration.md``): a run's failure, the paired failure test of a cell, the loss when both runs
succeed, and their verdicts and summaries over a record's cells.

* a run *fails* (:func:`failures`) when its held-out loss is not finite or at or
  above the held-out loss of the prediction 0, the cap of the capped metric
  (:func:`lagtheory.experiments.exploratory.design.capped_log_loss`); the cap of a task is read
  off the record (:func:`failure_cap`): the primary value of every run that
  :func:`lagtheory.experiments.exploratory.records.failed_runs` flags, which must be one number;
* the *failure comparison* of a cell (:func:`failure_test`) is McNemar's exact test
  on the paired failure indicators of joint and lag;
* the *conditional difference* of a cell (:func:`conditional_differences`) is lag's
  log10 held-out loss minus joint's on the seeds where both succeed;
* families are those of the verdict page (:mod:`lagtheory.experiments.exploratory.regimes`):
  the regime map of a task, optimiser and schedule (every cell of the task and
  optimiser that runs lag), Holm-adjusted; or, where stated, the 25 main-grid cells.

The independent re-analysis that the registration rests on is built on these
(:mod:`lagtheory.experiments.exploratory.reanalysis`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.training import OPTIMISERS

from ..parameters import fill_doc
from ..statistics.paired import holm, mcnemar_exact
from .design import ALPHA, PRIMARY
from .records import cells_where, failed_runs, per_seed
from .regimes import tasks_of


@fill_doc
def failure_cap(record: Mapping[str, Any], task: str) -> float:
    """The cap of the primary metric of ``task`` (log10 of the held-out loss of the prediction 0): the common
    primary value of the runs that :func:`lagtheory.experiments.exploratory.records.failed_runs` flags; ValueError if they
    disagree or none failed.

    Parameters
    ----------
    %(record)s
    task : str
        A task of the record.

    Returns
    -------
    float
        The cap.

    Raises
    ------
    ValueError
        If the failed runs' primary values disagree, or no run failed.
    """
    caps: set[float] = set()
    for cell in cells_where(record, task=task):
        for schedule in record["cells"][cell]["configuration"]["schedules"]:
            flagged = failed_runs(record, cell, schedule)
            caps.update(per_seed(record, cell, PRIMARY, schedule).astype(np.float64)[flagged].tolist())
    if len(caps) != 1:
        raise ValueError(f"task {task!r} must have one cap shared by its failed runs, found {sorted(caps)}")
    return caps.pop()


@fill_doc
def failures(record: Mapping[str, Any], cell: str, schedule: str, cap: float | None = None) -> NDArray[np.bool_]:
    """Per seed, whether the run failed: held-out loss not finite, or log10 of it at or above the cap
    (``cap``: :func:`failure_cap` of the cell's task, computed if not given).

    Parameters
    ----------
    %(record)s
    %(cell)s
    schedule : str
        A schedule of the cell.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    if cap is None:
        cap = failure_cap(record, record["cells"][cell]["configuration"]["task"])
    loss = per_seed(record, cell, "test_loss", schedule).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ~np.isfinite(loss) | (np.log10(loss) >= cap)


@fill_doc
def failure_test(
    record: Mapping[str, Any], cell: str, schedule: str = "lag", cap: float | None = None
) -> tuple[int, int, float]:
    """McNemar's exact test of joint's against ``schedule``'s failures in a cell: (seeds where only joint
    fails, seeds where only the schedule fails, two-sided p-value).

    Parameters
    ----------
    %(record)s
    %(cell)s
    schedule : str, optional
        The schedule compared with joint.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    tuple of (int, int, float)
        The two discordant counts and the p-value.
    """
    joint = failures(record, cell, "joint", cap)
    other = failures(record, cell, schedule, cap)
    test = mcnemar_exact(joint.astype(int), other.astype(int))
    return test.a_only, test.b_only, test.p_value


@fill_doc
def conditional_differences(
    record: Mapping[str, Any], cell: str, schedule: str = "lag", cap: float | None = None
) -> NDArray[np.float64]:
    """``schedule``'s log10 held-out loss minus joint's on the seeds where neither run failed.

    Parameters
    ----------
    %(record)s
    %(cell)s
    schedule : str, optional
        The schedule compared with joint.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    ndarray
        float64, one entry per seed where both succeed.
    """
    both = ~failures(record, cell, "joint", cap) & ~failures(record, cell, schedule, cap)
    values = per_seed(record, cell, PRIMARY, schedule).astype(np.float64)
    joint = per_seed(record, cell, PRIMARY, "joint").astype(np.float64)
    return (values - joint)[both]


@fill_doc
def lag_cells(record: Mapping[str, Any], task: str, optimiser: str) -> list[str]:
    """The cells of a task and optimiser that run lag (the regime-map family), in the record's order.

    Parameters
    ----------
    %(record)s
    task : str
        A task of the record.
    %(optimiser)s

    Returns
    -------
    list of str
        The cell names.
    """
    return [
        name
        for name in cells_where(record, task=task, optimiser=optimiser)
        if "lag" in record["cells"][name]["configuration"]["schedules"]
    ]


@fill_doc
def is_main(record: Mapping[str, Any], cell: str) -> bool:
    """Whether the cell is on the main grid.

    Parameters
    ----------
    %(record)s
    %(cell)s

    Returns
    -------
    bool
        True for the main sweep.
    """
    return record["cells"][cell]["configuration"]["sweep"] == "main"


@fill_doc
def failure_verdicts(record: Mapping[str, Any], task: str, optimiser: str, cap: float | None = None) -> dict[str, str]:
    """Main-grid cell of ``task`` and ``optimiser`` -> "fewer", "more" or "no difference": whether lag has
    significantly fewer or more failures than joint (McNemar exact, Holm over the task and optimiser's
    main-grid cells, level :data:`~lagtheory.experiments.exploratory.design.ALPHA`).

    Parameters
    ----------
    %(record)s
    task : str
        A task of the record.
    %(optimiser)s
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    dict of str to str
        Cell -> verdict.
    """
    if cap is None:
        cap = failure_cap(record, task)
    cells = [c for c in lag_cells(record, task, optimiser) if is_main(record, c)]
    tests = [failure_test(record, c, cap=cap) for c in cells]
    verdicts = {}
    for cell, (joint_only, lag_only, _), p in zip(cells, tests, holm([t[2] for t in tests]), strict=True):
        verdicts[cell] = "no difference" if p >= ALPHA else ("fewer" if joint_only > lag_only else "more")
    return verdicts


@fill_doc
def failure_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Over the main-grid cells of every record: failures of joint and of lag, paired runs, and the cells where
    lag has significantly fewer / more failures (:func:`failure_verdicts`); and the failure rates of joint and
    lag with Adam on the language main grid.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    dict
        ``joint``, ``lag``, ``runs``, ``fewer``, ``more`` and the two Adam failure rates.
    """
    found = {"joint": 0, "lag": 0, "runs": 0, "fewer": 0, "more": 0}
    adam = {"joint": 0, "lag": 0, "runs": 0}
    for study, record in records.items():
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            for optimiser in OPTIMISERS:
                for cell, verdict in failure_verdicts(record, task, optimiser, cap).items():
                    joint, lag = failures(record, cell, "joint", cap), failures(record, cell, "lag", cap)
                    found["joint"] += int(joint.sum())
                    found["lag"] += int(lag.sum())
                    found["runs"] += joint.size
                    if verdict != "no difference":
                        found[verdict] += 1
                    if study == "languages" and optimiser == "adam":
                        adam["joint"] += int(joint.sum())
                        adam["lag"] += int(lag.sum())
                        adam["runs"] += joint.size
    found["adam_language_joint_rate"] = adam["joint"] / adam["runs"]
    found["adam_language_lag_rate"] = adam["lag"] / adam["runs"]
    return found


@fill_doc
def conditional_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Over the main-grid cells with at least two seeds where both succeed: the share of cells where lag's
    conditional log loss is higher than joint's, by the mean, by the median, by the majority of seeds.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    dict of str to float
        ``cells``, ``mean``, ``median``, ``majority``.
    """
    mean_higher = median_higher = majority_higher = cells = 0
    for record in records.values():
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            for optimiser in OPTIMISERS:
                for cell in lag_cells(record, task, optimiser):
                    d = conditional_differences(record, cell, cap=cap)
                    if not is_main(record, cell) or d.size < 2:
                        continue
                    cells += 1
                    mean_higher += d.mean() > 0
                    median_higher += np.median(d) > 0
                    majority_higher += np.mean(d > 0) > 0.5
    return {
        "cells": cells,
        "mean": mean_higher / cells,
        "median": median_higher / cells,
        "majority": majority_higher / cells,
    }


@fill_doc
def paired_sd(records: Mapping[str, Mapping[str, Any]], study: str, conditional: bool = False) -> float:
    """The median over the study's main-grid cells of the standard deviation (ddof 1) of the paired per-seed
    differences lag - joint of the log10 held-out loss (``conditional``: on the seeds where both succeed,
    cells with at least 3 such seeds).

    Parameters
    ----------
    %(records)s
    study : str
        The study's name.
    conditional : bool, optional
        Only the seeds where both succeed.

    Returns
    -------
    float
        The median standard deviation.
    """
    record = records[study]
    sds = []
    for task in tasks_of(record):
        cap = failure_cap(record, task)
        for cell in cells_where(record, task=task, sweep="main"):
            if conditional:
                d = conditional_differences(record, cell, cap=cap)
            else:
                d = (per_seed(record, cell, PRIMARY, "lag") - per_seed(record, cell, PRIMARY, "joint")).astype(float)
            if d.size >= 3:
                sds.append(float(np.std(d, ddof=1)))
    return float(np.median(sds))
