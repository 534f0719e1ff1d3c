"""The registered transformer study reported as it is (lagtheory.experiments.confirmatory.transformer_report).

Every value is checked against an independent path: the powers against simulated tables decided by scipy's
binomial test (McNemar) or by the score test table by table; Tango's score statistic against McNemar's z at a
difference of 0 and against a maximum-likelihood estimate found by numerical optimisation; the TOST against its
closed form on a table with no discordant pair; the per-rate table and the planning on records built by hand
where the counts and p-values are written down; the replication's seeds against the normal approximation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

from lagtheory.experiments.confirmatory import transformer_report as R
from lagtheory.experiments.statistics.power import mcnemar_power

SIMULATED = 20_000


def _simulated_power(n, p10, p01, rejects, seed=0):
    """Share of SIMULATED trinomial tables (b, c) of n pairs that ``rejects(b, c)`` rejects, and its standard error."""
    counts = np.random.default_rng(seed).multinomial(n, [p10, p01, 1 - p10 - p01], size=SIMULATED)[:, :2]
    tables, frequency = np.unique(counts, axis=0, return_counts=True)
    share = sum(f for (b, c), f in zip(tables, frequency, strict=True) if rejects(int(b), int(c))) / SIMULATED
    return share, math.sqrt(max(share * (1 - share), 1 / SIMULATED) / SIMULATED)


def _mcnemar_rejects(level):
    return lambda b, c: b + c > 0 and scipy.stats.binomtest(b, b + c, 0.5).pvalue < level


def _analysis(counts):
    """A registered analysis built by hand: per language (lag better, joint better, n, verdict, rates)."""
    family = {
        language: {"lag_better": b, "joint_better": c, "n": n, "verdict": v, "joint_rate": jr, "lag_rate": lr}
        for language, (b, c, n, v, jr, lr) in counts.items()
    }
    return {"outcomes": {o: dict.fromkeys(R.VARIANTS, family) for o in R.OUTCOMES}}


def _design(seeds, languages):
    return {
        "seeds": list(range(seeds)),
        "compared": list(languages),
        "plan": {"level": 0.05 / len(languages)},
        "pilot": {"seeds": list(range(16))},
        "setting": {"layers": 1, "heads": 2, "width": 16, "max_train_length": 16},
    }


def test_observed_power_against_simulation():
    """Pooled 13 + 5 lag-better and 6 + 1 joint-better pairs of 2 x 40 seeds: p10 = 18/80, p01 = 7/80, at 0.025."""
    analysis = _analysis({"A": (13, 6, 40, "undetermined", 0.3, 0.1), "B": (5, 1, 40, "undetermined", 0.1, 0.0)})
    found = R.observed_power(analysis, _design(40, "AB"))["failure"]["best"]
    assert found["pooled"]["p10"] == pytest.approx(18 / 80) and found["pooled"]["p01"] == pytest.approx(7 / 80)
    share, error = _simulated_power(40, 18 / 80, 7 / 80, _mcnemar_rejects(0.025))
    assert abs(found["pooled"]["power"] - share) < 4 * error
    share, error = _simulated_power(40, 13 / 40, 6 / 40, _mcnemar_rejects(0.025), seed=1)
    assert abs(found["languages"]["A"] - share) < 4 * error


@pytest.mark.parametrize(("n", "p10", "p01", "margin"), [(200, 0.04, 0.03, 0.1), (120, 0.15, 0.15, 0.1)])
def test_tost_power_against_simulation(n, p10, p01, margin):
    exact = R.tost_power(n, p10, p01, margin, 0.05)
    share, error = _simulated_power(n, p10, p01, lambda b, c: R.paired_tost(b, c, n, margin) < 0.05)
    assert abs(exact - share) < 4 * error and 0.05 < exact < 0.999


@pytest.mark.parametrize(("b", "c", "n"), [(13, 6, 200), (1, 19, 200), (45, 41, 200), (0, 7, 50)])
def test_score_statistic_is_mcnemar_at_zero(b, c, n):
    assert float(R.score_statistic(b, c, n, 0.0)) == pytest.approx((b - c) / math.sqrt(b + c), rel=1e-12)


@pytest.mark.parametrize(("b", "c", "n", "delta"), [(13, 6, 200, 0.1), (1, 19, 200, -0.05), (45, 41, 200, 0.07)])
def test_score_statistic_against_a_numerical_maximum_likelihood(b, c, n, delta):
    """The constrained estimate of p01 found by maximising the trinomial likelihood with p10 = p01 + delta."""

    def minus_log_likelihood(q):
        return -(b * math.log(q + delta) + c * math.log(q) + (n - b - c) * math.log(1 - 2 * q - delta))

    low = max(0.0, -delta) + 1e-12
    q = scipy.optimize.minimize_scalar(
        minus_log_likelihood, bounds=(low, (1 - delta) / 2 - 1e-12), method="bounded", options={"xatol": 1e-13}
    ).x
    z = (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))
    assert float(R.score_statistic(b, c, n, delta)) == pytest.approx(z, rel=1e-6)


def test_tost_on_a_table_with_no_discordant_pair():
    """b = c = 0 of n: q = 0 at delta = margin, Z = -sqrt(n margin / (1 - margin)), and the TOST's p is its tail."""
    n, margin = 200, 0.05
    expected = 0.5 * math.erfc(math.sqrt(n * margin / (1 - margin)) / math.sqrt(2))
    assert R.paired_tost(0, 0, n, margin) == pytest.approx(expected, rel=1e-12)
    assert R.paired_tost(13, 6, 200, 0.1) == pytest.approx(R.paired_tost(6, 13, 200, 0.1), rel=1e-12)
    assert R.paired_tost(60, 20, 100, 0.1) > 0.5  # an observed difference of 0.4 is not within 0.1


@pytest.mark.parametrize(("b", "c", "n"), [(13, 6, 200), (1, 19, 200), (20, 10, 200), (0, 0, 30)])
def test_score_interval_excludes_zero_exactly_when_the_asymptotic_mcnemar_rejects(b, c, n):
    low, high = R.score_interval(b, c, n)
    assert low <= (b - c) / n <= high
    rejects = b + c > 0 and abs(b - c) / math.sqrt(b + c) > scipy.stats.norm.isf(0.025)
    assert (not low < 0 < high) == rejects


def test_ceiling_and_estimates_by_hand():
    analysis = _analysis({"A": (5, 1, 200, "equivalent", 0.025, 0.005), "B": (13, 6, 200, "undetermined", 0.07, 0.035)})
    found = R.estimates(analysis)
    assert found["failure"]["best"]["A"]["ceiling"] == pytest.approx(0.975)
    assert found["recognition"]["best"]["A"]["ceiling"] == pytest.approx(0.005)
    assert found["failure"]["best"]["B"]["advantage"] == pytest.approx(7 / 200)
    p = [R.paired_tost(5, 1, 200, 0.1), R.paired_tost(13, 6, 200, 0.1)]
    assert found["failure"]["best"]["A"]["p_tost_adjusted"] == pytest.approx(2 * min(p))  # Holm over two
    assert found["failure"]["best"]["B"]["p_tost_adjusted"] == pytest.approx(max(2 * min(p), max(p)))


def _unit(language, rows, seeds):
    return {
        "language": language,
        "seeds": seeds,
        "rows": [
            {
                "schedule": schedule,
                "training": {"output_lr": rate, "steps": 8, "warm_steps": 2 if schedule == "lag" else 0},
                "values": values,
            }
            for schedule, rate, values in rows
        ],
    }


def _flags(failed, at16):
    return {
        "failed": list(failed),
        "recognised": [not f and r for f, r in zip(failed, at16, strict=True)],
        "recognised_at": [[True, r, r] for r in at16],
    }


def test_per_rate_and_discordance_on_a_record_built_by_hand():
    """Ten seeds: at rate 0.1 joint recognises on all ten and lag on none (McNemar p = 2 / 2^10), at 0.01 both
    alike; Holm over the four rows multiplies the smallest p by 4."""
    seeds = list(range(10))
    good, bad = _flags([False] * 10, [True] * 10), _flags([False] * 10, [False] * 10)
    record = {
        "units": {
            "u": _unit(
                "L", [("joint", 0.01, good), ("lag", 0.01, good), ("joint", 0.1, good), ("lag", 0.1, bad)], seeds
            )
        }
    }
    design = {
        "compared": ["L"],
        "rates": [0.01, 0.1],
        "choices": {"L": {"shared_rate": 0.1, "joint": {"rate": 0.1}, "lag": {"rate": 0.01, "warm_fraction": 0.25}}},
    }
    rows = {(r["outcome"], r["rate"]): r for r in R.per_rate(record, design)}
    hit = rows[("recognition", 0.1)]
    assert (hit["lag_better"], hit["joint_better"]) == (0, 10)
    assert hit["p"] == pytest.approx(2 / 1024) and hit["p_adjusted"] == pytest.approx(8 / 1024)
    assert rows[("failure", 0.1)]["p"] == 1.0 and rows[("recognition", 0.01)]["p_adjusted"] == 1.0
    found = R.observed_discordance(record, design)
    assert found["recognition at 16 N0"] == {"shared": {"L": 1.0}, "best": {"L": 0.0}}
    assert found["failure"] == {"shared": {"L": 0.0}, "best": {"L": 0.0}}


@pytest.mark.parametrize("discordance", [0.11, 0.2])
def test_replication_seeds_against_the_normal_approximation(discordance):
    """Connor's normal approximation to McNemar's sample size, within 10% of the exact smallest n."""
    effect, level = 0.05, 0.05 / 3
    p10, p01 = R.effect_shares(discordance, effect)
    assert (p10 - p01, p10 + p01) == pytest.approx((effect, discordance))
    n = R.smallest_n(lambda k: mcnemar_power(k, p10, p01, level), 0.8)
    za, zb = scipy.stats.norm.isf(level / 2), scipy.stats.norm.isf(0.2)
    approximate = ((za * math.sqrt(discordance) + zb * math.sqrt(discordance - effect**2)) / effect) ** 2
    assert abs(n - approximate) < 0.1 * approximate


def test_the_answer_sentence_counts_what_the_analysis_holds():
    analysis = _analysis({"A": (5, 1, 200, "equivalent", 0.025, 0.005), "B": (13, 6, 200, "undetermined", 0.07, 0.035)})
    analysis["outcomes"]["recognition"] = {
        v: {
            "A": {**analysis["outcomes"]["failure"][v]["A"], "joint_rate": 0.97, "lag_rate": 0.99},
            "B": {**analysis["outcomes"]["failure"][v]["B"], "verdict": "helps"},
        }
        for v in R.VARIANTS
    }
    text = R.transformer_answer_sentence(analysis, _design(200, "AB"))
    assert "lag training helps on some comparisons" in text
    assert "2 of 8 comparisons are undetermined" in text
    assert "the 4 found equivalent (A)" in text and "at least 97%" in text
