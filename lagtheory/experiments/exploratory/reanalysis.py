"""The exploratory re-analysis behind the registration (``book/registration.md``, *The exploratory basis*).

The per-seed records of the first study (``book/data/summary_<study>.json``,
:mod:`lagtheory.experiments.exploratory.records`, seeds 0..29) are the *exploratory* set the
registration was written from. This module re-analyses them along the decomposed outcomes the
registration adopts (:mod:`lagtheory.experiments.exploratory.outcomes`), and :func:`reanalysis`
recomputes every number of the independent re-analysis that the registration relies on; ``python -m
lagtheory.experiments.run reanalysis`` (or its alias ``python -m lagtheory.experiments.exploratory.reanalysis``,
which the registration page quotes) prints them next to the values that re-analysis reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import NDArray

from lagtheory.training import OPTIMISERS

from ..parameters import fill_doc
from ..statistics.paired import holm, paired_t
from .design import ALPHA, PRIMARY, centre_name
from .outcomes import conditional_summary, failure_summary, is_main, lag_cells, paired_sd
from .records import load_exploratory, per_seed
from .regimes import effect, regime_map, tasks_of, verdict_counts


def _wilcoxon(d: NDArray[np.float64]) -> float:
    return float(scipy.stats.wilcoxon(d).pvalue) if np.any(d != 0) else 1.0


def _sign_test(d: NDArray[np.float64]) -> float:
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0
    return float(scipy.stats.binomtest(int(np.sum(nonzero > 0)), nonzero.size, 0.5).pvalue)


def _direction(d: NDArray[np.float64], test: str) -> float:
    if test == "t":
        return float(np.sign(d.mean()))
    if test == "wilcoxon":
        return float(np.sign(np.median(d)))
    nonzero = d[d != 0]
    return float(np.sign(np.sum(nonzero > 0) - np.sum(nonzero < 0)))


TESTS: Mapping[str, Callable[[NDArray[np.float64]], float]] = {"t": paired_t, "wilcoxon": _wilcoxon, "sign": _sign_test}


@fill_doc
def log_loss_counts(records: Mapping[str, Mapping[str, Any]], test: str) -> tuple[int, int]:
    """(helps, hurts) of lag against joint over every main-grid cell, on the capped log10 held-out loss with
    ``test`` ("t", "wilcoxon", "sign") on the paired differences (joint - lag, positive favours lag),
    Holm-adjusted over each regime-map family.

    Parameters
    ----------
    %(records)s
    test : {"t", "wilcoxon", "sign"}
        The paired test.

    Returns
    -------
    tuple of int
        (helps, hurts).
    """
    helps = hurts = 0
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                cells = lag_cells(record, task, optimiser)
                differences = [
                    (per_seed(record, c, PRIMARY, "joint") - per_seed(record, c, PRIMARY, "lag")).astype(np.float64)
                    for c in cells
                ]
                adjusted = holm([TESTS[test](d) for d in differences])
                for cell, d, p in zip(cells, differences, adjusted, strict=True):
                    if is_main(record, cell) and p < ALPHA:
                        direction = _direction(d, test)
                        helps += direction > 0
                        hurts += direction < 0
    return helps, hurts


def language_metric_counts(record: Mapping[str, Any], quantity: str) -> tuple[int, int]:
    """(helps, hurts) of lag over the 300 language main-grid cells by the verdict page's rule (paired t, or
    exact McNemar for ``recognised``, Holm over each regime-map family) applied to ``quantity``.

    Parameters
    ----------
    record : mapping
        The languages record.
    quantity : str
        A stored per-seed quantity (the primary metric, ``recognised``, ``accuracy_above_training``).

    Returns
    -------
    tuple of int
        (helps, hurts).
    """
    from ..statistics.paired import compare, compare_family

    binary = quantity == "recognised"
    higher_is_better = quantity != PRIMARY
    helps = hurts = 0
    for task in tasks_of(record):
        for optimiser in OPTIMISERS:
            cells = lag_cells(record, task, optimiser)
            family = compare_family(
                [
                    compare(
                        cell,
                        per_seed(record, cell, quantity, "lag").astype(np.float64),
                        per_seed(record, cell, quantity, "joint").astype(np.float64),
                        higher_is_better,
                        0.1 if binary else math.log10(1.1),
                        binary=binary,
                    )
                    for cell in cells
                ]
            )
            for comparison in family:
                if is_main(record, comparison.name):
                    helps += comparison.verdict == "helps"
                    hurts += comparison.verdict == "hurts"
    return helps, hurts


@fill_doc
def rate_sweep_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """At the centre of every task and optimiser, with the base-rate sweep's ratio-1 cells (calibrated rate
    times 1/sqrt(10) and sqrt(10)): in how many of the 18 centre cells the shared calibrated rate is the best of
    the three (lowest mean log10 held-out loss) for both schedules, exactly one, none; and lag at its best rate
    against joint at its best (paired t, Holm over the 12 language centre cells): helps, hurts.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    dict
        ``both``, ``one``, ``none`` and ``own_rate`` (verdict counts).
    """
    from ..statistics.paired import compare, compare_family

    optimum = {2: 0, 1: 0, 0: 0}
    language = []
    for study, record in records.items():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                names = [
                    f"{task}/{optimiser}/base_rate/ratio=1 base*0.316",
                    centre_name(task, optimiser),
                    f"{task}/{optimiser}/base_rate/ratio=1 base*3.16",
                ]
                best = {
                    schedule: int(np.argmin([per_seed(record, n, PRIMARY, schedule).mean() for n in names]))
                    for schedule in ("joint", "lag")
                }
                optimum[(best["joint"] == 1) + (best["lag"] == 1)] += 1
                if study == "languages":
                    language.append(
                        compare(
                            f"{task}/{optimiser}",
                            per_seed(record, names[best["lag"]], PRIMARY, "lag").astype(np.float64),
                            per_seed(record, names[best["joint"]], PRIMARY, "joint").astype(np.float64),
                            False,
                            math.log10(1.1),
                        )
                    )
    counts = verdict_counts(compare_family(language))
    return {"both": optimum[2], "one": optimum[1], "none": optimum[0], "own_rate": counts}


@fill_doc
def accounting_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Lag against joint under equal joint-phase steps (the accounting cells, one family over every task and
    optimiser, paired t, Holm): cell -> verdict, for the cells whose verdict is not undetermined.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    dict of str to str
        Cell -> verdict.
    """
    from ..statistics.paired import compare, compare_family

    comparisons = []
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                cell = f"{task}/{optimiser}/accounting/joint"
                comparisons.append(
                    compare(
                        cell,
                        per_seed(record, cell, PRIMARY, "lag").astype(np.float64),
                        per_seed(record, cell, PRIMARY, "joint").astype(np.float64),
                        False,
                        math.log10(1.1),
                    )
                )
    return {c.name: c.verdict for c in compare_family(comparisons) if c.verdict != "undetermined"}


def recognition_at_rates(record: Mapping[str, Any]) -> dict[tuple[str, str, str], float]:
    """Languages: the share of runs that recognise the language, per (optimiser, rate, schedule) over the six
    centre cells (rate "centre") and their base-rate cells at ratio 1 ("base*0.316", "base*3.16").

    Parameters
    ----------
    record : mapping
        The languages record.

    Returns
    -------
    dict of tuple to float
        (optimiser, rate, schedule) -> share.
    """
    shares = {}
    for optimiser in OPTIMISERS:
        for rate in ("base*0.316", "centre", "base*3.16"):
            for schedule in ("joint", "lag"):
                values = [
                    per_seed(
                        record,
                        centre_name(task, optimiser)
                        if rate == "centre"
                        else f"{task}/{optimiser}/base_rate/ratio=1 {rate}",
                        "recognised",
                        schedule,
                    )
                    for task in tasks_of(record)
                ]
                shares[(optimiser, rate, schedule)] = float(np.mean(np.concatenate(values)))
    return shares


@fill_doc
def mover_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The 'who moves first' split of the verdict page: per ratio, in how many of the 90 main-grid cells the
    attention moved more than the readout in the first 10 steps in more than half of joint's runs; within
    ratio 1, Spearman's correlation between that share and lag's effect (lag - joint, log10 loss); and lag's
    helps / hurts (regime-map families) per readout scale.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    dict
        ``attention_first``, ``spearman``, ``spearman_p`` and ``by_scale``.
    """
    attention_first: dict[float, int] = {}
    shares, effects = [], []
    by_scale: dict[float, list[int]] = {}
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                for cell, comparison in regime_map(record, task, optimiser, "lag").items():
                    configuration = record["cells"][cell]["configuration"]
                    if configuration["sweep"] != "main":
                        continue
                    ratio = float(configuration["level"].split("ratio=")[1])
                    scale = float(configuration["training"]["output_scale"])
                    moved = per_seed(record, cell, "attention_moved_at_10", "joint") > per_seed(
                        record, cell, "output_moved_at_10", "joint"
                    )
                    attention_first[ratio] = attention_first.get(ratio, 0) + int(moved.mean() > 0.5)
                    if ratio == 1:
                        shares.append(float(moved.mean()))
                        effects.append(effect(record, comparison)[0])
                    tally = by_scale.setdefault(scale, [0, 0])
                    tally[0] += comparison.verdict == "helps"
                    tally[1] += comparison.verdict == "hurts"
    rho = scipy.stats.spearmanr(shares, effects)
    return {
        "attention_first": dict(sorted(attention_first.items())),
        "spearman": float(rho.statistic),
        "spearman_p": float(rho.pvalue),
        "by_scale": dict(sorted(by_scale.items())),
    }


def contradicting_cells(record: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """Language main-grid cells where the log loss says lag helps (regime-map family) while lag recognises the
    language in fewer runs than joint: (cell, lag's recognising runs, joint's).

    Parameters
    ----------
    record : mapping
        The languages record.

    Returns
    -------
    list of tuple of (str, int, int)
        The cells.
    """
    found = []
    for task in tasks_of(record):
        for optimiser in OPTIMISERS:
            for cell, comparison in regime_map(record, task, optimiser, "lag").items():
                if not is_main(record, cell) or comparison.verdict != "helps":
                    continue
                lag = int(per_seed(record, cell, "recognised", "lag").sum())
                joint = int(per_seed(record, cell, "recognised", "joint").sum())
                if lag < joint:
                    found.append((cell, lag, joint))
    return found


def _helps_hurts_rows(
    what: str, reported: Sequence[tuple[str, str]], counts: Callable[[str], tuple[int, int]]
) -> list[tuple[str, str, str]]:
    """Rows (``what`` with the key in place of ``{}``, its reported value, ``helps / hurts`` recomputed by
    ``counts(key)``) of :func:`reanalysis`, one per (key, reported value)."""
    return [(what.format(key), issue, "{} / {}".format(*counts(key))) for key, issue in reported]


@fill_doc
def reanalysis(records: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Every number of the independent re-analysis that the registration relies on: (what, its reported value, the
    value recomputed here).

    Parameters
    ----------
    %(records)s

    Returns
    -------
    list of tuple of (str, str, str)
        The rows.
    """
    languages = records["languages"]
    rows = _helps_hurts_rows(
        "language main grid, lag helps / hurts by {}",
        ((PRIMARY, "75 / 76"), ("recognised", "49 / 20"), ("accuracy_above_training", "57 / 0")),
        lambda quantity: language_metric_counts(languages, quantity),
    )
    contradictions = contradicting_cells(languages)
    rows.append(
        (
            "log loss says helps, lag recognises less: cells (lag's, joint's recognising runs of 30)",
            "6 cells (3-18 vs 18-30)",
            f"{len(contradictions)} cells ({min(c[1] for c in contradictions)}-{max(c[1] for c in contradictions)} "
            f"vs {min(c[2] for c in contradictions)}-{max(c[2] for c in contradictions)})",
        )
    )
    fails = failure_summary(records)
    rows.append(
        (
            "failures joint / lag in paired main-grid runs",
            "1760 / 541 of 13500",
            f"{fails['joint']} / {fails['lag']} of {fails['runs']}",
        )
    )
    rows.append(
        (
            "cells where lag fails significantly less / more (McNemar, Holm over 25)",
            "51 / 0",
            f"{fails['fewer']} / {fails['more']}",
        )
    )
    conditional = conditional_summary(records)
    rows.append(
        (
            "cells where lag's loss is higher when both succeed",
            "67-71%",
            f"median {conditional['median']:.1%}, majority of seeds {conditional['majority']:.1%}, "
            f"mean {conditional['mean']:.1%} (of {conditional['cells']})",
        )
    )
    rows += _helps_hurts_rows(
        "main grid, lag helps / hurts by {} test",
        (("t", "86 / 82"), ("wilcoxon", "86 / 109"), ("sign", "75 / 110")),
        lambda test: log_loss_counts(records, test),
    )
    sweep = rate_sweep_summary(records)
    rows.append(
        (
            "centre cells where the shared rate is the optimum of exactly one schedule",
            "9 of 18",
            f"{sweep['one']} of 18 (both {sweep['both']}, neither {sweep['none']})",
        )
    )
    rows.append(
        (
            "language centre cells where lag helps, each schedule at its best rate",
            "4 of 12",
            f"{sweep['own_rate']['helps']} of 12 (hurts {sweep['own_rate']['hurts']})",
        )
    )
    accounting = accounting_summary(records)
    rows.append(
        (
            "equal joint-phase steps: FIRST, FIRST_LEARNED (SGD)",
            "equivalent, equivalent",
            ", ".join(f"{cell.split('/')[0]} {verdict}" for cell, verdict in accounting.items()),
        )
    )
    shares = recognition_at_rates(languages)
    rows.append(
        (
            "joint recognises at the calibrated rate (language centres)",
            "92-94%",
            f"SGD {shares[('sgd', 'centre', 'joint')]:.1%}, Adam {shares[('adam', 'centre', 'joint')]:.1%}",
        )
    )
    rows.append(
        (
            "recognition at 3.16x the rate, joint / lag",
            "lag far more often",
            f"SGD {shares[('sgd', 'base*3.16', 'joint')]:.1%} / {shares[('sgd', 'base*3.16', 'lag')]:.1%}, "
            f"Adam {shares[('adam', 'base*3.16', 'joint')]:.1%} / {shares[('adam', 'base*3.16', 'lag')]:.1%}",
        )
    )
    movers = mover_summary(records)
    rows.append(
        (
            "attention-first cells of 90 at ratios 0.1, 0.3, 1, 3, 10",
            "1, 3, 48, 81, 89",
            ", ".join(str(v) for v in movers["attention_first"].values()),
        )
    )
    rows.append(
        (
            "within ratio 1: Spearman (attention-first share, lag's effect)",
            "-0.14, p = 0.18",
            f"{movers['spearman']:.2f}, p = {movers['spearman_p']:.2f}",
        )
    )
    rows.append(
        (
            "lag helps / hurts at readout scale 3; at 0.01",
            "36 / 4; 4 / 27",
            f"{movers['by_scale'][3.0][0]} / {movers['by_scale'][3.0][1]}; "
            f"{movers['by_scale'][0.01][0]} / {movers['by_scale'][0.01][1]}",
        )
    )
    rows.append(
        (
            "Adam, language main grid: joint / lag failure rate",
            "14.6% / 1.0%",
            f"{fails['adam_language_joint_rate']:.1%} / {fails['adam_language_lag_rate']:.1%}",
        )
    )
    rows.append(
        (
            "paired sd of the log10 loss difference, languages (median over cells)",
            "about 1",
            f"{paired_sd(records, 'languages'):.2f}",
        )
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the re-analysis (:func:`reanalysis`) of the records in ``book/data``.

    Parameters
    ----------
    argv : sequence of str, optional
        Not used (the command takes no arguments).
    """
    for what, issue, here in reanalysis(load_exploratory()):
        print(f"{what}\n    issue: {issue}\n    here:  {here}")


if __name__ == "__main__":  # the command the registration page quotes: an alias of the one command
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.exploratory.reanalysis")
