"""The registered replication's answer in words and tables, computed from its analysis
(:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`): per language, outcome
and variant, "lag helps by at least X points" (the lower end of lag's 95% score interval), "hurts by at least X
points", "equivalent within X points" (the minimum effect of interest) or "undetermined" with its power against
the discordances observed; and the plain sentence the front pages state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..statistics.paired import format_p

VARIANT_NAMES = {"shared": "shared rate", "best": "best vs best"}
"""How the tables name the two variants."""
OUTCOME_WORDS = {"failure": "failure", "recognition at 16 N0": "recognition"}
"""How a sentence names the two outcomes."""


def points(share: float) -> str:
    """A share as percentage points, to one decimal (a statistic of random draws: at most 4 significant digits).

    Parameters
    ----------
    share : float
        A share in [-1, 1].

    Returns
    -------
    str
        For example ``"2.3 points"``.
    """
    return f"{100 * share:.1f} points"


def margin_points(effect: float) -> str:
    """The minimum effect of interest as percentage points, as registered (``0.05`` -> ``"5 points"``).

    Parameters
    ----------
    effect : float
        The design's ``effect``.

    Returns
    -------
    str
        The margin in points.
    """
    return f"{100 * effect:g} points"


def comparison_phrase(entry: Mapping[str, Any], effect: float) -> str:
    """One comparison's registered verdict as a phrase: the bound that its verdict supports.

    Parameters
    ----------
    entry : mapping
        One comparison of the analysis: ``verdict``, ``interval`` (lag's advantage, 95% score interval) and
        ``power_observed``.
    effect : float
        The minimum effect of interest (the equivalence margin).

    Returns
    -------
    str
        ``"helps by at least X points"`` (X the interval's lower end; where that end is not above 0, the interval
        is named instead), ``"hurts by at least X points"`` (X minus its upper end), ``"equivalent within X
        points"`` or ``"undetermined (power P)"``.
    """
    low, high = entry["interval"]
    verdict = entry["verdict"]
    if verdict == "helps":
        return f"helps by at least {points(low)}" if low > 0 else f"helps (95% interval from {points(low)})"
    if verdict == "hurts":
        return f"hurts by at least {points(-high)}" if high < 0 else f"hurts (95% interval to {points(high)})"
    if verdict == "equivalent":
        return f"equivalent within {margin_points(effect)}"
    return f"undetermined (power {entry['power_observed']:.2g})"


def answer_table(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> list[str]:
    """The answer as Markdown table lines: a row per outcome and variant, a column per language, each cell the
    comparison's phrase (:func:`comparison_phrase`) in bold.

    Parameters
    ----------
    analysis : mapping
        The registered replication's analysis, outcome -> variant -> language -> entry
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`).
    design : mapping
        The registered replication's design
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).

    Returns
    -------
    list of str
        The table's lines, header first.
    """
    languages = list(design["compared"])
    lines = ["| outcome, variant | " + " | ".join(languages) + " |", "|---|" + "---|" * len(languages)]
    for outcome in design["outcomes"]:
        for variant in design["variants"]:
            cells = [
                f"**{comparison_phrase(analysis[outcome][variant][name], design['effect'])}**" for name in languages
            ]
            lines.append(f"| {outcome}, {VARIANT_NAMES[variant]} | " + " | ".join(cells) + " |")
    return lines


def detail_table(analysis: Mapping[str, Any], design: Mapping[str, Any], outcome: str) -> list[str]:
    """One outcome's comparisons in numbers as Markdown table lines: the seeds where only lag, or only joint, has
    the better outcome; lag's advantage with its 95% score interval (points); McNemar's and the equivalence test's
    Holm-adjusted p; the power against the discordances observed; the verdict.

    Parameters
    ----------
    analysis : mapping
        The registered replication's analysis, outcome -> variant -> language -> entry
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`).
    design : mapping
        The registered replication's design
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).
    outcome : str
        One of the design's ``outcomes``.

    Returns
    -------
    list of str
        The table's lines, header first.
    """
    lines = [
        f"| {outcome}: language, variant | only lag / only joint better | lag's advantage, points [95%] | "
        "p (Holm): difference; equivalence | power, observed | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for variant in design["variants"]:
        for language in design["compared"]:
            e = analysis[outcome][variant][language]
            low, high = e["interval"]
            lines.append(
                f"| {language}, {VARIANT_NAMES[variant]} | {e['lag_better']} / {e['joint_better']} | "
                f"{100 * e['advantage']:.2f} [{100 * low:.2f}, {100 * high:.2f}] | {format_p(e['p_adjusted'])}; "
                f"{format_p(e['p_equivalence_adjusted'])} | {e['power_observed']:.2g} | {e['verdict']} |"
            )
    return lines


VERBS = {"helps": "helps", "hurts": "hurts", "equivalent": "is equivalent", "undetermined": "is undetermined"}
"""A verdict as the verb of a sentence whose subject is lag."""
VERDICT_ORDER = ("helps", "hurts", "equivalent", "undetermined")
"""The order in which a sentence names verdicts that cover equally many comparisons."""
VARIANT_PLACES = {"shared": "at the shared rate", "best": "at each schedule's best rate"}
"""Where a comparison of each variant was made, as a phrase."""


def where(cells: set[tuple[str, str]], design: Mapping[str, Any]) -> str:
    """A set of (outcome, variant) comparisons of one language as a phrase: "everywhere", "at the shared rate"
    (both outcomes there), "on failure" (both variants), or the comparisons one by one ("on recognition at the
    shared rate").

    Parameters
    ----------
    cells : set of tuple of str
        Some of the language's (outcome, variant) comparisons.
    design : mapping
        The replication's design: its ``outcomes`` and ``variants``.

    Returns
    -------
    str
        The phrase.
    """
    outcomes, variants = list(design["outcomes"]), list(design["variants"])
    if len(cells) == len(outcomes) * len(variants):
        return "everywhere"
    for variant in variants:
        if cells == {(outcome, variant) for outcome in outcomes}:
            return VARIANT_PLACES[variant]
    for outcome in outcomes:
        if cells == {(outcome, variant) for variant in variants}:
            return f"on {OUTCOME_WORDS[outcome]}"
    ordered = [(o, v) for o in outcomes for v in variants if (o, v) in cells]
    return " and ".join(f"on {OUTCOME_WORDS[o]} {VARIANT_PLACES[v]}" for o, v in ordered)


def language_clause(
    analysis: Mapping[str, Any], design: Mapping[str, Any], language: str, margin_said: bool = False
) -> str:
    """What the replication says of one language, as a clause whose subject is lag: the verdict of most of its
    comparisons and where it holds (with lag's smallest bound where it helps or hurts everywhere), then the
    others, e.g. "helps on FIRST at each schedule's best rate (equivalent within 5 points at the shared rate)"
    or "is equivalent on TWO_B except on recognition at the shared rate, where it hurts".

    Parameters
    ----------
    analysis : mapping
        The registered replication's analysis, outcome -> variant -> language -> entry
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`).
    design : mapping
        The registered replication's design
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).
    language : str
        One of the design's ``compared``.
    margin_said : bool, optional
        Whether an earlier clause already gave the equivalence margin (then "equivalent" alone).

    Returns
    -------
    str
        The clause.
    """
    groups: dict[str, set[tuple[str, str]]] = {}
    for outcome in design["outcomes"]:
        for variant in design["variants"]:
            groups.setdefault(analysis[outcome][variant][language]["verdict"], set()).add((outcome, variant))
    ordered = sorted(groups, key=lambda v: (-len(groups[v]), VERDICT_ORDER.index(v)))
    main, others = ordered[0], ordered[1:]
    margin = "" if margin_said else f" within {margin_points(design['effect'])}"

    def verb(verdict: str, first: bool) -> str:
        text = VERBS[verdict] if first or verdict != "equivalent" else "equivalent"
        return text + (margin if verdict == "equivalent" else "")

    clause = f"{verb(main, True)} on {language}"
    if not others:
        clause += " everywhere"
        if main in ("helps", "hurts"):
            entries = [analysis[o][v][language] for o, v in groups[main]]
            bound = min(e["interval"][0] if main == "helps" else -e["interval"][1] for e in entries)
            if bound > 0:
                clause += f" (by at least {points(bound)})"
        return clause
    if len(others) == 1 and len(groups[others[0]]) == 1:
        return f"{clause} except {where(groups[others[0]], design)}, where it {VERBS[others[0]]}"
    rest = "; ".join(f"{verb(v, False).removeprefix('is ')} {where(groups[v], design)}" for v in others)
    return f"{clause} {where(groups[main], design)} ({rest})"


def replication_sentence(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> str:
    """The plain answer to "and on a standard transformer?" from the registered replication: a
    :func:`language_clause` per language (the equivalence margin given once), scoped to the replicated
    configuration.

    Parameters
    ----------
    analysis : mapping
        The registered replication's analysis, outcome -> variant -> language -> entry
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`).
    design : mapping
        The registered replication's design
        (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).

    Returns
    -------
    str
        One sentence.
    """
    clauses, margin_said = [], False
    for language in design["compared"]:
        clauses.append(language_clause(analysis, design, language, margin_said))
        margin_said = margin_said or "within" in clauses[-1]
    listed = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + ", and " + clauses[-1]
    return f"On a standard transformer (registered replication, this configuration), lag {listed}."
