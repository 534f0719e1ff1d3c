"""The registered lag study (lagtheory.experiments.confirmatory.lag_study): the comparison and verdicts on
constructed records against hand-counted values (the sign test's p-value as an integer binomial sum, Holm by
its step-down rule), the power against a Monte Carlo estimate, the frozen design against the one its rule
builds from the committed pilot, and the committed records against the design.
"""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from lagtheory.experiments.confirmatory import lag_study as S
from lagtheory.experiments.paths import LAG_DESIGN, LAG_RECORDS

ROOT = Path(__file__).resolve().parents[1]


def _entry(attention, output) -> dict:
    half = {"attention": attention, "output": output}
    return {"half": {reading: dict.fromkeys(("raw", "calibrated", "error"), half) for reading in ("knockout",)}}


def _sign_p(later: int, earlier: int) -> float:
    """The exact two-sided sign test's p-value, summed in integers."""
    n, k = later + earlier, min(later, earlier)
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, j) for j in range(k + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def test_a_comparison_counts_the_seeds_by_hand():
    attention = [5, 7, None, 3, None, 20, 30, 9]
    output = [2, 7, 4, None, None, 10, 40, 1]
    found = S.comparison(_entry(attention, output), "knockout", "calibrated")
    assert found["defined"] == 5 and found["undefined"] == {"attention": 1, "output": 1, "both": 1}
    assert (found["later"], found["earlier"], found["ties"]) == (3, 1, 1)
    assert found["p"] == pytest.approx(_sign_p(3, 1), abs=1e-15)
    assert found["mean"] == pytest.approx((3 + 0 + 10 - 10 + 8) / 5) and found["median"] == 3.0
    low, high = found["interval"]
    assert low <= found["mean"] <= high


def test_verdicts_follow_the_registered_rules():
    later = S.comparison(_entry(list(range(20, 32)), [1] * 12), "knockout", "calibrated")
    assert later["p"] == pytest.approx(2 / 4096, abs=1e-15)
    assert S.verdict(later, 0.01) == "later" and S.verdict(later, 0.05) == "undetermined"
    earlier = S.comparison(_entry([1] * 12, list(range(20, 32))), "knockout", "calibrated")
    assert S.verdict(earlier, 0.01) == "earlier"
    few = S.comparison(_entry(list(range(20, 29)) + [None] * 3, [1] * 12), "knockout", "calibrated")
    assert few["defined"] == S.MIN_DEFINED - 1 and S.verdict(few, 1e-9) == "undetermined"


def test_the_families_are_holm_adjusted_across_the_languages():
    rng = np.random.default_rng(5)
    record = {"languages": {}}
    for i, language in enumerate(S.LANGUAGES):
        attention = [int(v) for v in rng.integers(0, 40, 14)]
        output = [int(v) - 6 + 3 * i for v in attention]
        half = {"attention": attention, "output": output}
        record["languages"][language] = {
            "half": {r: dict.fromkeys(("raw", "calibrated", "error"), half) for r in ("knockout", "attribution")}
        }
    found = S.analyse(record)["outcomes"]["primary"]
    p = {lang: _sign_p(v["later"], v["earlier"]) for lang, v in found.items()}
    order = sorted(p, key=p.get)
    rejected, m = set(), len(order)
    for k, lang in enumerate(order):  # Holm's step-down rule: reject while p_(k) < alpha / (m - k)
        if p[lang] >= S.ALPHA / (m - k):
            break
        rejected.add(lang)
    for lang, v in found.items():
        assert v["p"] == pytest.approx(p[lang], abs=1e-15)
        assert (v["verdict"] != "undetermined") == (lang in rejected), lang
        if lang in rejected:
            assert v["verdict"] == ("later" if v["later"] > v["earlier"] else "earlier")


def test_the_power_by_monte_carlo():
    rng = np.random.default_rng(38)
    n, level, draws = 81, S.ALPHA / 6, 100_000
    counts = rng.multinomial(n, [0.5625, 0.1875, 0.25], size=draws)
    table = {}
    rejected = 0
    for later, earlier in counts[:, :2]:
        key = (int(later), int(earlier))
        if key not in table:
            table[key] = _sign_p(*key) < level
        rejected += table[key]
    from lagtheory.experiments.statistics.power import mcnemar_power

    assert abs(rejected / draws - mcnemar_power(n, 0.5625, 0.1875, level)) < 0.005


def test_the_design_is_the_one_its_rule_builds_from_the_committed_pilot():
    pilot = json.loads((ROOT / LAG_RECORDS / "pilot.json").read_text())
    assert pilot["seeds"] == list(S.PILOT_SEEDS) and pilot["exploratory"] is True
    built = S.derive_design(pilot)
    stored = json.loads((ROOT / LAG_DESIGN).read_text())
    planning, stored_planning = built.pop("planning"), stored.pop("planning")
    assert built == stored
    assert planning["seeds"] == stored_planning["seeds"] == len(stored["seeds"])
    for key in ("no_sign", "p_later", "p_earlier"):
        assert abs(planning[key] - stored_planning[key]) < 1e-12
    assert stored["seeds"][0] == S.FIRST_SEED and not set(stored["seeds"]) & set(S.PILOT_SEEDS)


def test_the_committed_records_are_the_design_s():
    design = json.loads((ROOT / LAG_DESIGN).read_text())
    path = ROOT / LAG_RECORDS / "study.json"
    if not path.exists():
        pytest.skip("the registered runs are not committed yet")
    record = json.loads(path.read_text())
    assert record["seeds"] == design["seeds"] and record["training"] == design["training"]
    assert record["evaluation"] == design["evaluation"] and sorted(record["languages"]) == sorted(design["languages"])
    analysis = json.loads((ROOT / LAG_RECORDS / "analysis.json").read_text())
    assert analysis["outcomes"] == json.loads(json.dumps(S.analyse(record)["outcomes"]))


def test_the_frozen_design_loads_only_with_the_quoted_hash(tmp_path):
    """The committed lag design loads as its JSON, byte for byte the file; a copy one byte off is refused, and so
    is the design under a page whose lag section quotes another hash."""
    page = ROOT / "book" / "registration.md"
    committed = (ROOT / LAG_DESIGN).read_bytes()
    assert S.load_design(ROOT / LAG_DESIGN, page) == json.loads(committed)
    changed = tmp_path / "lag_design.json"
    changed.write_bytes(committed.replace(b"\n", b" \n", 1))
    with pytest.raises(ValueError, match="not the registered lag design"):
        S.load_design(changed, page)
    text = page.read_text(encoding="utf-8")
    begin = text.index("<!-- registered section lag: begin -->")
    end = text.index("<!-- registered section lag: end -->")
    digest = S.registered_design_hash(page, "lag")
    assert digest == hashlib.sha256(committed).hexdigest()
    lag = text[begin:end]
    other = tmp_path / "registration.md"
    other.write_text(text[:begin] + lag.replace(digest, "0" * 64) + text[end:], encoding="utf-8")
    with pytest.raises(ValueError, match="not the registered lag design"):
        S.load_design(ROOT / LAG_DESIGN, other)
    line = f"design file SHA-256: `{digest}`"
    other.write_text(text[:begin] + lag.replace(line, f"{line}\n{line}") + text[end:], encoding="utf-8")
    with pytest.raises(ValueError, match="the lag section must quote the design file's SHA-256 once, found 2"):
        S.load_design(ROOT / LAG_DESIGN, other)
