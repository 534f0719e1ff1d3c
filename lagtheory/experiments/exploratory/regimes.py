"""The analysis of a study record (:mod:`lagtheory.experiments.exploratory.records`): the
pre-registered primary families, the regime map of each task and optimiser,
and the chapters' shared tables (the figures:
:mod:`lagtheory.experiments.exploratory.figures`).

Every comparison is of one schedule against ``joint`` on the primary metric,
paired by seed (:func:`lagtheory.experiments.statistics.paired.compare`), and every
verdict comes from :func:`lagtheory.experiments.statistics.paired.compare_family` with
Holm's adjustment over the family the comparison belongs to:

* the *primary* families (:func:`primary`): lag against joint, and
  three-phase against joint, at the centre of the main grid of every task and
  optimiser of the record (one family per schedule);
* the *regime map* of a task, optimiser and schedule (:func:`regime_map`),
  exploratory: every cell of that task and optimiser that runs the schedule
  (the main grid and the one-factor sweeps), one family.

The effect shown is ``schedule - joint`` in the metric's own units (for the
log10 held-out loss: negative means the schedule's held-out loss is lower,
``10 ** effect`` the ratio of the two geometric-mean losses).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.training import OPTIMISERS

from ..parameters import fill_doc
from ..statistics.paired import Comparison, compare_family, format_p
from .design import CENTRE, centre_name, main_level
from .records import cells_where, comparisons


def cell_of(comparison: Comparison) -> str:
    """The cell name of a comparison made by :func:`lagtheory.experiments.exploratory.records.comparisons`.

    Parameters
    ----------
    comparison : Comparison
        A comparison named ``"<cell>: <schedule> vs <baseline>"``.

    Returns
    -------
    str
        The cell name.
    """
    return comparison.name.split(": ")[0]


@fill_doc
def effect(record: Mapping[str, Any], comparison: Comparison) -> tuple[float, float, float]:
    """(schedule - joint, and its 95% interval) in the metric's own units (the comparison's mean is
    oriented so that positive favours the schedule).

    Parameters
    ----------
    %(record)s
    comparison : Comparison
        A comparison of a schedule against joint.

    Returns
    -------
    tuple of float
        ``(effect, low, high)``.
    """
    if record["higher_is_better"]:
        return comparison.mean, comparison.low, comparison.high
    return -comparison.mean, -comparison.high, -comparison.low


@fill_doc
def tasks_of(record: Mapping[str, Any]) -> list[str]:
    """The task names of a record, in the order of its cells.

    Parameters
    ----------
    %(record)s

    Returns
    -------
    list of str
        The task names.
    """
    return list(dict.fromkeys(content["configuration"]["task"] for content in record["cells"].values()))


@fill_doc
def primary(record: Mapping[str, Any], schedule: str) -> list[Comparison]:
    """The primary family of ``schedule`` against joint: the centre cell of every task and optimiser.

    Parameters
    ----------
    %(record)s
    schedule : str
        The schedule compared with joint ("lag" or "three-phase" in the registered families).

    Returns
    -------
    list of Comparison
        Holm-adjusted over the family.
    """
    cells = [centre_name(task, optimiser) for task in tasks_of(record) for optimiser in OPTIMISERS]
    return compare_family(comparisons(record, schedule, cells=cells))


@fill_doc
def regime_map(record: Mapping[str, Any], task: str, optimiser: str, schedule: str) -> dict[str, Comparison]:
    """The exploratory family of ``schedule`` against joint over every cell of the task and optimiser that
    runs both: cell name -> Holm-adjusted comparison.

    Parameters
    ----------
    %(record)s
    task : str
        The task.
    %(optimiser)s
    schedule : str
        The schedule compared with joint.

    Returns
    -------
    dict of str to Comparison
        Cell name -> comparison.
    """
    cells = [
        name
        for name in cells_where(record, task=task, optimiser=optimiser)
        if schedule in record["cells"][name]["configuration"]["schedules"]
    ]
    return {cell_of(c): c for c in compare_family(comparisons(record, schedule, cells=cells))}


@fill_doc
def grid(record: Mapping[str, Any], family: Mapping[str, Comparison], task: str, optimiser: str) -> dict[str, NDArray]:
    """The main grid of a regime map as arrays (readout scale x ratio): ``effect``, ``low``, ``high`` and
    ``verdict`` (strings).

    Parameters
    ----------
    %(record)s
    family : mapping of str to Comparison
        A regime map (:func:`regime_map`) that holds every main-grid cell.
    task : str
        The task.
    %(optimiser)s

    Returns
    -------
    dict of str to ndarray
        ``effect``, ``low``, ``high`` (float64) and ``verdict`` (object), each (scales, ratios).
    """
    scales, ratios = record["design"]["readout_scales"], record["design"]["ratios"]
    arrays = {key: np.full((len(scales), len(ratios)), np.nan) for key in ("effect", "low", "high")}
    verdicts = np.full((len(scales), len(ratios)), "", dtype=object)
    for i, scale in enumerate(scales):
        for j, ratio in enumerate(ratios):
            comparison = family[f"{task}/{optimiser}/main/{main_level(scale, ratio)}"]
            arrays["effect"][i, j], arrays["low"][i, j], arrays["high"][i, j] = effect(record, comparison)
            verdicts[i, j] = comparison.verdict
    return {**arrays, "verdict": verdicts}


def verdict_counts(comparisons_: Sequence[Comparison]) -> dict[str, int]:
    """How many comparisons have each verdict.

    Parameters
    ----------
    comparisons_ : sequence of Comparison
        Adjusted comparisons.

    Returns
    -------
    dict of str to int
        Verdict -> count, every verdict present.
    """
    counts = dict.fromkeys(("helps", "hurts", "equivalent", "undetermined"), 0)
    for comparison in comparisons_:
        counts[comparison.verdict] += 1
    return counts


@fill_doc
def describe(record: Mapping[str, Any], comparison: Comparison, digits: int = 2) -> str:
    """A comparison in one line: verdict, effect (schedule - joint) with its 95% interval, the Holm-adjusted
    p-values of the difference and of equivalence; few digits, so the line holds on any machine.

    Parameters
    ----------
    %(record)s
    comparison : Comparison
        An adjusted comparison of a schedule against joint.
    digits : int, optional
        Decimals of the effect and its interval.

    Returns
    -------
    str
        The line.
    """
    verdict, interval, difference, equivalence = describe_columns(record, comparison, digits)
    return f"{verdict}: {interval}, difference {difference}, equivalence {equivalence}"


@fill_doc
def describe_columns(record: Mapping[str, Any], comparison: Comparison, digits: int = 2) -> tuple[str, str, str, str]:
    """The parts of :func:`describe`, one per column of a table: the verdict, the effect with its 95% interval,
    and the Holm-adjusted p-values of the difference and of equivalence.

    Parameters
    ----------
    %(record)s
    comparison : Comparison
        An adjusted comparison of a schedule against joint.
    digits : int, optional
        Decimals of the effect and its interval.

    Returns
    -------
    tuple of str
        ``("hurts", "+0.68 [+0.33, +1.11]", "p = 0.0047", "p = 1")``; a helps or hurts verdict whose
        difference also lies within the equivalence margin says so: ``"hurts (within the margin)"``.
    """
    value, low, high = effect(record, comparison)
    within = " (within the margin)" if comparison.equivalent and comparison.verdict in ("helps", "hurts") else ""
    return (
        f"{comparison.verdict}{within}",
        f"{value:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]",
        format_p(comparison.p_difference_adjusted),
        format_p(comparison.p_equivalence_adjusted),
    )


@fill_doc
def regime_summary(record: Mapping[str, Any], family: Mapping[str, Comparison], sweep: str) -> dict[str, list[str]]:
    """The levels of one sweep of a regime map, by verdict: verdict -> [level, ...].

    Parameters
    ----------
    %(record)s
    family : mapping of str to Comparison
        A regime map (:func:`regime_map`).
    sweep : str
        A sweep of :data:`lagtheory.experiments.exploratory.design.SWEEPS`.

    Returns
    -------
    dict of str to list of str
        Verdict -> levels, as :func:`level_label` prints them.
    """
    found: dict[str, list[str]] = {"helps": [], "hurts": [], "equivalent": [], "undetermined": []}
    for name, comparison in family.items():
        configuration = record["cells"][name]["configuration"]
        if configuration["sweep"] == sweep:
            found[comparison.verdict].append(level_label(configuration["level"]))
    return found


_BUDGETS = {"0.25": "T/4", "0.5": "T/2", "2": "2T", "4": "4T"}


def level_label(level: str) -> str:
    r"""A sweep's level as the book prints it: a step budget as a multiple of the centre's budget T
    (``T*2`` is ``2T``, ``T*0.5`` is ``T/2``: the design's budget ``T``, printed so that it is not read
    as the three-phase chapter's step count :math:`T^\star`), a base rate as the calibrated rate times or divided by 3.16 (``ratio=1 base*0.316``
    is ``ratio 1, base/3.16``); any other level as it is.

    Parameters
    ----------
    level : str
        A cell's level (``record["cells"][name]["configuration"]["level"]``).

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> level_label("T*0.5"), level_label("T*4"), level_label("ratio=0.1 base*3.16"), level_label("preset")
    ('T/2', '4T', 'ratio 0.1, 3.16 base', 'preset')
    """
    if level.startswith("T*") and level[2:] in _BUDGETS:
        return _BUDGETS[level[2:]]
    ratio, _, base = level.partition(" base*")
    if ratio.startswith("ratio=") and base in ("0.316", "3.16"):
        rate = "base/3.16" if base == "0.316" else "3.16 base"
        return f"ratio {ratio.removeprefix('ratio=')}, {rate}"
    return level


# -- the chapters' shared cells ----------------------------------------------------------------------


def calibration_table(record: Mapping[str, Any]) -> list[str]:
    """Lines of the chosen base rates, a header and one line per task and optimiser: the centre's rate,
    the range over the main grid, and how many rates of the calibration grid diverged in some cell.

    Parameters
    ----------
    record : mapping
        A study record (:mod:`lagtheory.experiments.exploratory.records`). Calibrated.

    Returns
    -------
    list of str
        The lines.
    """
    lines = [f"{'task':17s} {'opt':5s} {'centre':>6s}  {'main grid':15s} grid rates that diverged in some cell"]
    for task, by_optimiser in record["calibration"].items():
        for optimiser, calibration in by_optimiser.items():
            rates = list(calibration["base_rates"].values())
            centre = calibration["base_rates"][main_level(*CENTRE)]
            diverging = sum(1 for row in calibration["diverged_runs"] if any(row))
            grid = f"{min(rates):.3g} to {max(rates):.3g}"
            lines.append(
                f"{task:17s} {optimiser:5s} {centre:>6.3g}  {grid:15s} {diverging} of {len(calibration['grid'])}"
            )
    return lines


@fill_doc
def record_summary(record: Mapping[str, Any]) -> list[str]:
    """The empirical chapters' summary of a study record: its :func:`calibration_table`, then the seeds and
    the equivalence margin with its rule (wrapped at 90 characters), the number of cells and the command
    that wrote the record.

    Parameters
    ----------
    %(record)s

    Returns
    -------
    list of str
        The lines.
    """
    margin = f"{len(record['seeds'])} paired seeds; margin {record['margin']:.4f}: {record['margin_rule']}"
    return [
        *calibration_table(record),
        *textwrap.wrap(margin, 90),
        f"{len(record['cells'])} cells; written by: {record['command']}",
    ]
