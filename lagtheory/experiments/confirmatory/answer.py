"""The book's answer, in sentences computed from the committed records: first the plain answer, one sentence
per question a reader brings, then the registered study's counts.

**The plain answer** (:data:`PLAIN_KEYS`; :func:`plain_answer`), which the README, the introduction and the
verdict chapter open with (``tests/test_one_answer.py`` fails when any of the three says something else):

* ``lag``: does attention lag the output layer in joint training? :func:`lag_sentence`, from the registered
  lag study (``book/data/lag_study/analysis.json``: each group's knockout half-time on the one-layer model);
* ``help``: does making it lag help, where and by how much? :func:`help_sentence`, from the one-layer
  registered study (``book/data/confirmatory/analysis.json``), scoped to its cells;
* ``transformer``: on a standard transformer?
  :func:`~lagtheory.experiments.confirmatory.replication_answer.replication_sentence`, from the registered
  replication of the transformer study (``book/data/transformer_replication/analysis.json``), scoped to that model
  and configuration;
* ``unknown``: what is not known. :func:`unknown_sentence`.

Each has its own function so that a newer record replaces one sentence without touching the others (the
transformer's sentence came from the first registered transformer study until its replication ran). :func:`verdict_table` counts
the registered verdicts per outcome and task family.

**The registered study's counts** (:data:`KEYS`; :func:`sentences`), which the verdict chapter gives after the
plain answer, from ``analysis.json`` (the registered verdicts) and ``predictor.json`` (the validation cells'
registered labels); no sentence says more than those verdicts:

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

``python -m lagtheory.experiments.run answer`` prints the README's opening paragraph, the plain
answer (:func:`readme_paragraph`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from statistics import median
from typing import Any

from ..paths import BOOK_DATA, CONFIRMATORY_RECORDS
from .design import regime_of
from .predictor_breakdown import family_of
from .registration import CONFIRMATORY_LEVELS
from .replication_answer import replication_sentence
from .transformer_replication import REPLICATION_DESIGN, load_replication

FEW = 0.1
"""A group of cells counts as one where lag does not help when it fails less often in at most this share."""
SHARED = "shared total"
"""The variant of the registered shared-rate comparison (both schedules at the calibrated rate, equal total steps)."""
BEST = "best total"
"""The variant of best-vs-best tuning under equal total steps."""
KEYS = ("helps", "not", "loss", "scope", "step")
"""The sentences of the registered study's counts, in order."""
PLAIN_KEYS = ("lag", "help", "transformer", "unknown")
"""The sentences of the plain answer, in order; one per question."""
FAMILIES = ("languages", "regression", "in-context regression")
"""The one-layer study's task families, in the order of the verdict table."""
OUTCOME_NAMES = {
    "failure": "failure (a)",
    "recognition": "recognition (a')",
    "conditional": "loss when both succeed (b)",
    "window": "step-size window (c)",
}
"""How the verdict table names the one-layer study's outcomes."""
GROUP_NAMES = {
    "languages": "on the languages",
    "regression": "in regression",
    "in-context regression": "in in-context regression",
    "LP-FT": "with the attention preset, LP-FT",
}
PLAIN_GROUP_NAMES = {**GROUP_NAMES, "LP-FT": "with LP-FT"}
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


def _of(count: int, total: int) -> str:
    return f"all {total}" if count == total else f"none of {total}" if count == 0 else f"{count} of {total}"


def lag_sentence(study: Mapping[str, Any]) -> str:
    """The plain answer to "does attention lag the output layer in joint training?" (the registered lag study).

    Parameters
    ----------
    study : mapping
        ``book/data/lag_study/analysis.json``: ``outcomes.primary``, language -> entry with ``verdict`` (later,
        earlier or undetermined) and ``mean`` (the attention's knockout half-time minus the output layer's, in
        steps, over the seeds where both are defined).

    Returns
    -------
    str
        One sentence: on how many of its languages the attention's half-time is shown later (and earlier), with
        the range of the mean differences where it is shown later (or earlier).
    """
    primary = study["outcomes"]["primary"]
    total = len(primary)
    later = sorted(entry["mean"] for entry in primary.values() if entry["verdict"] == "later")
    earlier = sorted(-entry["mean"] for entry in primary.values() if entry["verdict"] == "earlier")
    main, other, way, other_way = (
        (later, earlier, "later", "earlier") if len(later) >= len(earlier) else (earlier, later, "earlier", "later")
    )
    text = (
        f"Registered: in joint training of the one-layer model the attention learns {way} than the output layer on "
        f"{_of(len(main), total)} languages (knockout half-times"
    )
    if main:
        text += f", {_range([round(value) for value in main])} steps apart on average"
    text += ")"
    if other:
        text += f", and {other_way} on {_of(len(other), total)}"
    return text + "."


def help_sentence(analysis: Mapping[str, Any]) -> str:
    """The plain answer to "does making it lag help, where and by how much?" (the one-layer registered study).

    Parameters
    ----------
    analysis : mapping
        ``book/data/confirmatory/analysis.json``.

    Returns
    -------
    str
        One sentence: the failure verdicts at the shared calibrated rate (how many cells fewer, more), the median
        difference of the failure rates over the cells where lag fails less often, the readout scale with the
        largest share of such cells, and the groups where it fails less often in at most :data:`FEW` of the cells.
    """
    entries = analysis["outcomes"]["failure"][SHARED]
    helped = [entry["difference"] for entry in entries.values() if entry["verdict"] == "helps"]
    hurt = sum(entry["verdict"] == "hurts" for entry in entries.values())
    scales: dict[float, list[bool]] = {}
    groups: dict[str, list[bool]] = {}
    for cell, entry in entries.items():
        scales.setdefault(regime_of(cell.split("/", 2)[2])[0], []).append(entry["verdict"] == "helps")
        groups.setdefault(family_of(cell.split("/")[0]), []).append(entry["verdict"] == "helps")
        groups.setdefault(_regime(cell), []).append(entry["verdict"] == "helps")
    where = ""
    if helped:
        scale = max(scales, key=lambda s: (sum(scales[s]) / len(scales[s]), s))
        where = f" (by a median {100 * abs(median(helped)):.1f} points, most at readout scale {_number(scale)})"
    few = [
        PLAIN_GROUP_NAMES.get(name, f"at the {name}")
        for name, flags in groups.items()
        if sum(flags) <= FEW * len(flags)
    ]
    return (
        f"On the one-layer models, lag (the output layer alone for the first quarter) fails less often "
        f"than joint training in {len(helped)} of {len(entries)} registered cells chosen where gains were "
        f"expected{where}, more often {_in(hurt)}" + (f", and hardly ever {' or '.join(few)}." if few else ".")
    )


def unknown_sentence(study: Mapping[str, Any], analysis: Mapping[str, Any], predictor: Mapping[str, Any]) -> str:
    """The plain answer to "what is not known?".

    Parameters
    ----------
    study : mapping
        ``book/data/lag_study/analysis.json`` (the registered lag study's verdicts).
    analysis : mapping
        ``book/data/confirmatory/analysis.json`` (which way the failure verdicts lean).
    predictor : mapping
        ``book/data/confirmatory/predictor.json`` (its ``outcome``: ``beats_baseline``).

    Returns
    -------
    str
        One sentence naming what the records leave open.
    """
    failure = _verdicts(analysis, "failure", SHARED)
    way = "helps" if _count(failure, "helps") >= _count(failure, "hurts") else "hurts"
    undetermined = sorted(
        language for language, entry in study["outcomes"]["primary"].items() if entry["verdict"] == "undetermined"
    )
    open_ = []
    if undetermined:
        open_.append(f"whether the attention lags on {', '.join(undetermined)}")
    open_.append("whether it lags on a standard transformer (only explored)")
    if not predictor["outcome"]["beats_baseline"]:
        open_.append(f"why lag {way} (its registered predictor does not beat the design alone)")
    open_.append(f"whether it {way} elsewhere")
    return "Not known: " + ", ".join(open_[:-1]) + (", and " if open_[:-1] else "") + open_[-1] + "."


def plain_answer(data: Path = BOOK_DATA) -> dict[str, str]:
    """The plain answer's sentences (:data:`PLAIN_KEYS`) from the committed records under ``data``.

    Parameters
    ----------
    data : pathlib.Path, optional
        The records' folder (default ``book/data``): ``lag_study/analysis.json``, ``confirmatory/analysis.json``,
        ``confirmatory/predictor.json``, ``transformer_replication/analysis.json`` (and the replication's design).

    Returns
    -------
    dict of str to str
        The sentences by key.
    """
    study = json.loads((data / "lag_study" / "analysis.json").read_text())
    analysis = json.loads((data / "confirmatory" / "analysis.json").read_text())
    predictor = json.loads((data / "confirmatory" / "predictor.json").read_text())
    replication = json.loads((data / "transformer_replication" / "analysis.json").read_text())["outcomes"]
    design = load_replication(data / REPLICATION_DESIGN.name, data.parent / "registration.md")
    return {
        "lag": lag_sentence(study),
        "help": help_sentence(analysis),
        "transformer": replication_sentence(replication, design),
        "unknown": unknown_sentence(study, analysis, predictor),
    }


def _counts(verdicts: list[str]) -> str:
    return " / ".join(str(verdicts.count(v)) for v in ("helps", "hurts", "equivalent", "undetermined"))


def verdict_table(analysis: Mapping[str, Any], transformer: Mapping[str, Any]) -> list[str]:
    """The registered verdicts per outcome and task family, as Markdown table lines: for each outcome of the
    one-layer study (shared calibrated rate, equal total steps) and of the transformer study (shared rate),
    the counts helps / hurts / equivalent / undetermined (a window without a verdict of these counts in none).

    Parameters
    ----------
    analysis : mapping
        ``book/data/confirmatory/analysis.json``.
    transformer : mapping
        ``book/data/transformer_study/analysis.json``.

    Returns
    -------
    list of str
        The table's lines, header first.
    """
    lines = [
        "| outcome | "
        + " | ".join(f"one-layer: {f}" if i == 0 else f for i, f in enumerate(FAMILIES))
        + " | transformer: languages |",
        "|---|" + "---|" * (len(FAMILIES) + 1),
    ]
    for outcome, name in OUTCOME_NAMES.items():
        entries = analysis["window"]["total"] if outcome == "window" else analysis["outcomes"][outcome][SHARED]
        row = []
        for family in FAMILIES:
            found = [e["verdict"] for cell, e in entries.items() if family_of(cell.split("/")[0]) == family]
            row.append(f"{_counts(found)} of {len(found)}" if found else "not run")
        if outcome == "window":
            found = [e["verdict"] for e in transformer["window"].values()]
        elif outcome in transformer["outcomes"]:
            found = [e["verdict"] for e in transformer["outcomes"][outcome]["shared"].values()]
        else:
            found = []
        row.append(f"{_counts(found)} of {len(found)}" if found else "not run")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return lines


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
    """The plain answer as the README's second paragraph: the sentences of :data:`PLAIN_KEYS` in order.

    Parameters
    ----------
    found : mapping of str to str
        :func:`plain_answer`'s result.

    Returns
    -------
    str
        One paragraph.
    """
    return " ".join(found[key] for key in PLAIN_KEYS)
