"""The registered replication's answer in words and tables, computed from its analysis
(:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`): per language, outcome
and variant, "lag helps by at least X points" (the lower end of lag's 95% score interval), "hurts by at least X
points", "equivalent within X points" (the minimum effect of interest) or "undetermined" with its power against
the discordances observed; and the plain sentence the front pages state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..parameters import fill_doc
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


@fill_doc
def comparisons(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The analysis's comparisons in the tables' order: (outcome, variant, language).

    Parameters
    ----------
    %(replication_analysis)s
    %(replication_design)s

    Returns
    -------
    list of tuple of str
        Every comparison, outcome by outcome, variant by variant, language by language.
    """
    return [
        (outcome, variant, language)
        for outcome in design["outcomes"]
        for variant in design["variants"]
        for language in design["compared"]
        if language in analysis[outcome][variant]
    ]


@fill_doc
def answer_table(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> list[str]:
    """The answer as Markdown table lines: a row per language, a column per outcome and variant, each cell the
    comparison's phrase (:func:`comparison_phrase`) in bold.

    Parameters
    ----------
    %(replication_analysis)s
    %(replication_design)s

    Returns
    -------
    list of str
        The table's lines, header first.
    """
    columns = [(outcome, variant) for outcome in design["outcomes"] for variant in design["variants"]]
    lines = [
        "| language | " + " | ".join(f"{outcome}, {VARIANT_NAMES[variant]}" for outcome, variant in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for language in design["compared"]:
        cells = [f"**{comparison_phrase(analysis[o][v][language], design['effect'])}**" for o, v in columns]
        lines.append(f"| {language} | " + " | ".join(cells) + " |")
    return lines


@fill_doc
def detail_table(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> list[str]:
    """Every comparison's counts and tests as Markdown table lines: the seeds where only lag, or only joint, has
    the better outcome; lag's advantage with its 95% score interval (points); McNemar's and the equivalence test's
    Holm-adjusted p; the power against the discordances observed; the verdict.

    Parameters
    ----------
    %(replication_analysis)s
    %(replication_design)s

    Returns
    -------
    list of str
        The table's lines, header first.
    """
    lines = [
        "| outcome, variant | language | only lag better | only joint better | lag's advantage [95%] | "
        "p, difference (Holm) | p, equivalence (Holm) | power, observed | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for outcome, variant, language in comparisons(analysis, design):
        e = analysis[outcome][variant][language]
        low, high = e["interval"]
        lines.append(
            f"| {outcome}, {VARIANT_NAMES[variant]} | {language} | {e['lag_better']} | {e['joint_better']} | "
            f"{100 * e['advantage']:.2f} [{100 * low:.2f}, {100 * high:.2f}] | {format_p(e['p_adjusted'])} | "
            f"{format_p(e['p_equivalence_adjusted'])} | {e['power_observed']:.2g} | {e['verdict']} |"
        )
    return lines


@fill_doc
def language_summary(analysis: Mapping[str, Any], design: Mapping[str, Any], language: str) -> str:
    """What the replication says of one language over its outcomes and variants, as a clause: where lag helps
    (the outcomes, and the largest lower end among those comparisons), where it hurts (likewise), and then
    whether the other comparisons are equivalent or some are undetermined.

    Parameters
    ----------
    %(replication_analysis)s
    %(replication_design)s
    language : str
        One of the design's ``compared``.

    Returns
    -------
    str
        The clause: "lag helps on failure by at least X points", "lag hurts ...", "lag is equivalent within X
        points", "lag is undetermined", or the shown verdicts followed by "equivalent within X points in the
        others" or "undetermined in k of m comparisons".
    """
    entries = [
        (outcome, analysis[outcome][variant][language])
        for outcome in design["outcomes"]
        for variant in design["variants"]
    ]
    order = list(OUTCOME_WORDS)
    parts = []
    for verdict, sign in (("helps", 1), ("hurts", -1)):
        shown = [(outcome, e) for outcome, e in entries if e["verdict"] == verdict]
        if not shown:
            continue
        bound, outcome = max((e["interval"][0] if sign > 0 else -e["interval"][1], o) for o, e in shown)
        outcomes = sorted({o for o, _ in shown}, key=order.index)
        text = f"{verdict} on {' and '.join(OUTCOME_WORDS[o] for o in outcomes)}"
        if bound > 0:
            text += f" by at least {points(bound)}" + (f" of {OUTCOME_WORDS[outcome]}" if len(outcomes) > 1 else "")
        parts.append(text)
    verdicts = [e["verdict"] for _, e in entries]
    margin = margin_points(design["effect"])
    if not parts:
        if all(v == "equivalent" for v in verdicts):
            return f"lag is equivalent within {margin}"
        if all(v == "undetermined" for v in verdicts):
            return "lag is undetermined"
    shown_text = "lag " + " and ".join(parts) if parts else "lag is equivalent within " + margin
    if "undetermined" in verdicts:
        return f"{shown_text}, undetermined in {verdicts.count('undetermined')} of {len(verdicts)} comparisons"
    if parts and "equivalent" in verdicts:
        return f"{shown_text}, equivalent within {margin} in the others"
    return shown_text


@fill_doc
def replication_sentence(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> str:
    """The plain answer to "and on a standard transformer?" from the registered replication: per language (those
    with the same clause together) :func:`language_summary`, scoped to the replicated configuration.

    Parameters
    ----------
    %(replication_analysis)s
    %(replication_design)s

    Returns
    -------
    str
        One sentence, its clauses joined by semicolons.
    """
    clauses: dict[str, list[str]] = {}
    for language in design["compared"]:
        clauses.setdefault(language_summary(analysis, design, language), []).append(language)
    said = [f"on {' and '.join(languages)} {clause}" for clause, languages in clauses.items()]
    return (
        "On a standard transformer (a registered replication, this configuration), against joint training: "
        + "; ".join(said)
        + "."
    )
