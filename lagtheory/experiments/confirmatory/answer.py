"""The book's one answer to "does lag help?", in sentences computed from the committed confirmatory records.

The verdict chapter glues these sentences into its first screen, the introduction's claims table glues the
short form from the verdict, and the README's opening carries the same sentences as text;
``tests/test_one_answer.py`` fails when any of the three says something else. Every number is counted from
``book/data/confirmatory/analysis.json`` (the registered verdicts) and ``predictor.json`` (the validation
cells' registered labels); no sentence says more than those verdicts:

* ``helps``: the failure (a) and recognition (a') verdicts at the shared calibrated rate and equal total steps
  (the registered shared-rate comparison);
* ``not``: the task families and regimes in which lag fails significantly less often in at most a tenth of
  the cells (:data:`FEW`), with how many of their cells are shown equivalent;
* ``loss``: the loss when both succeed (b), over all cells and at the centre;
* ``scope``: which regimes the 108 cells cover (their readout scales and ratios) and the registered
  labels of the broader validation cells (lag fails significantly less or more often, exact McNemar p < 0.05
  within the cell, unadjusted);
* ``step``: the step-size window (c) under equal total steps and the failure verdicts with each schedule at its
  own best configuration (best-vs-best, equal total steps);
* ``short``: the one clause of the introduction's claims table.

``python -m lagtheory.experiments.run answer`` prints the README's opening paragraph
(:func:`readme_paragraph`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..paths import CONFIRMATORY_RECORDS
from .design import regime_of
from .predictor_breakdown import family_of
from .registration import CONFIRMATORY_LEVELS

FEW = 0.1
"""A group of cells counts as one where lag does not help when it fails less often in at most this share."""
SHARED = "shared total"
"""The variant of the registered shared-rate comparison (both schedules at the calibrated rate, equal total steps)."""
BEST = "best total"
"""The variant of best-vs-best tuning under equal total steps."""
KEYS = ("helps", "not", "loss", "scope", "step")
"""The sentences of the answer block, in order."""
GROUP_NAMES = {
    "languages": "on the languages",
    "regression": "in regression",
    "in-context regression": "in in-context regression",
    "LP-FT": "with the attention preset, LP-FT",
}
"""How a group is named in a sentence (a regime otherwise "at the <regime>")."""


def _verdicts(analysis: Mapping[str, Any], outcome: str, variant: str) -> dict[str, str]:
    return {cell: entry["verdict"] for cell, entry in analysis["outcomes"][outcome][variant].items()}


def _count(verdicts: Mapping[str, str], verdict: str, cells: list[str] | None = None) -> int:
    return sum(verdicts[c] == verdict for c in (verdicts if cells is None else cells))


def _regime(cell: str) -> str:
    level = cell.split("/", 2)[2]
    return next(name for name, value in CONFIRMATORY_LEVELS.items() if value == level)


def _number(value: float) -> str:
    return f"{value:g}"


def _range(values: list[float]) -> str:
    return f"{_number(min(values))}-{_number(max(values))}"


def _in(count: int) -> str:
    return "in none" if count == 0 else f"in {count}"


def sentences(analysis: Mapping[str, Any], predictor: Mapping[str, Any]) -> dict[str, str]:
    """The answer's sentences (module docstring) from the registered analysis and H5's record.

    Parameters
    ----------
    analysis : mapping
        ``book/data/confirmatory/analysis.json``: ``outcomes`` and ``window``.
    predictor : mapping
        ``book/data/confirmatory/predictor.json``: its ``cells`` (readout scale, ratio, discordant failures,
        p-value).

    Returns
    -------
    dict of str to str
        :data:`KEYS` and ``short``.
    """
    failure = _verdicts(analysis, "failure", SHARED)
    recognition = _verdicts(analysis, "recognition", SHARED)
    conditional = _verdicts(analysis, "conditional", SHARED)
    cells = list(failure)
    out = {
        "helps": (
            f"Lag fails less often than joint training in {_count(failure, 'helps')} of {len(cells)} registered cells "
            f"(100 fresh seeds each), more often {_in(_count(failure, 'hurts'))}, and recognises the languages more "
            f"often in {_count(recognition, 'helps')} of {len(recognition)}, less {_in(_count(recognition, 'hurts'))}."
        )
    }
    groups: dict[str, list[str]] = {}
    for cell in cells:
        groups.setdefault(family_of(cell.split("/")[0]), []).append(cell)
        groups.setdefault(_regime(cell), []).append(cell)
    few = [
        f"{GROUP_NAMES.get(name, f'at the {name}')} ({_count(failure, 'helps', members)} of {len(members)}; "
        f"{_count(failure, 'equivalent', members)} shown equivalent)"
        for name, members in groups.items()
        if _count(failure, "helps", members) <= FEW * len(members)
    ]
    out["not"] = (
        "No such gain " + ", or ".join(few) + "."
        if few
        else "It fails less often in more than a tenth of the cells of every task family and regime."
    )
    centre = groups["centre"]
    out["loss"] = (
        f"When both succeed, lag's loss is lower in {_count(conditional, 'helps')} cells and higher in "
        f"{_count(conditional, 'hurts')}; at the {len(centre)} centre cells, higher {_in(_count(conditional, 'hurts', centre))}, "
        f"lower {_in(_count(conditional, 'helps', centre))}."
    )
    regimes = [regime_of(cell.split("/", 2)[2]) for cell in cells]
    rows = predictor["cells"]
    scales = sorted({row["readout_scale"] for row in rows})
    ratios = sorted({row["ratio"] for row in rows})
    significant = [row for row in rows if row["p_value"] < 0.05]
    out["scope"] = (
        f"The cells were chosen where the exploratory study pointed (readout {_range([r[0] for r in regimes])}, ratio "
        f"{_range([r[1] for r in regimes])}); in {len(rows)} broader validation cells (readout {_range(scales)}, ratio "
        f"{_range(ratios)}) lag failed less often in "
        f"{sum(r['joint_only_fails'] > r['lag_only_fails'] for r in significant)}, more "
        f"{_in(sum(r['joint_only_fails'] < r['lag_only_fails'] for r in significant))} (per-cell tests)."
    )
    window = [entry["verdict"] for entry in analysis["window"]["total"].values()]
    best = _verdicts(analysis, "failure", BEST)
    out["step"] = (
        f"The benefit is tied to the step size: lag succeeds over more step sizes (wider window in "
        f"{window.count('helps')} cells, narrower {_in(window.count('hurts'))}), and with each schedule tuned it fails "
        f"less often in {_count(best, 'helps')}, more often {_in(_count(best, 'hurts'))}."
    )
    out["short"] = (
        f"fewer failures than joint in {_count(failure, 'helps')} of {len(cells)} cells, more "
        f"{_in(_count(failure, 'hurts'))}"
    )
    return out


def answer(folder: Path = CONFIRMATORY_RECORDS) -> dict[str, str]:
    """:func:`sentences` of the committed records in ``folder``.

    Parameters
    ----------
    folder : pathlib.Path, optional
        Where the confirmatory analyses live (default ``book/data/confirmatory``).

    Returns
    -------
    dict of str to str
        The sentences.
    """
    return sentences(
        json.loads((folder / "analysis.json").read_text()), json.loads((folder / "predictor.json").read_text())
    )


def readme_paragraph(found: Mapping[str, str]) -> str:
    """The answer as the README's second paragraph: the sentences of :data:`KEYS` in order.

    Parameters
    ----------
    found : mapping of str to str
        :func:`sentences`' result.

    Returns
    -------
    str
        One paragraph.
    """
    return " ".join(found[key] for key in KEYS)
