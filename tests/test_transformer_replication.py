"""The registered replication of the transformer study (lagtheory.experiments.confirmatory.transformer_replication;
book/registration.md, its replication section).

The section hashes to its stored value by two paths and moves only its own hash; the design is frozen data: the
file hashes to the value the section quotes, is what the stated rules derive from the registered study's
committed design and record (recomputed here), and the loader refuses another file; the seeds are fresh (no
other constant or record under book/data holds one); the git order (the registration committed before every
record of the replication) is checked with the registered study's order check; the units and the registered
analysis are checked on records built by hand where the counts, p-values and verdicts are written down.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path

import pytest
from test_transformer_study import registered_before

from lagtheory.experiments.confirmatory import registration as G
from lagtheory.experiments.confirmatory import transformer as S
from lagtheory.experiments.confirmatory import transformer_replication as X
from lagtheory.experiments.confirmatory import transformer_report as R
from lagtheory.experiments.exploratory.calibration import CALIBRATION_SEEDS
from lagtheory.experiments.exploratory.lag_timing import TIMING_SEEDS
from lagtheory.experiments.exploratory.transformer_pilot import PILOT_SEEDS
from lagtheory.experiments.paths import REGISTRATION_PAGE, REGISTRATION_REPLICATION_HASH, TRANSFORMER_DESIGN
from lagtheory.experiments.predictor.balance import PREDICTOR_SEEDS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / REGISTRATION_PAGE
TEXT = PAGE.read_text(encoding="utf-8")
DESIGN_FILE = ROOT / X.REPLICATION_DESIGN
DESIGN = json.loads(DESIGN_FILE.read_text(encoding="utf-8"))
RECORDS = sorted((ROOT / X.REPLICATION_FOLDER).glob("*.json*")) if (ROOT / X.REPLICATION_FOLDER).exists() else []


def test_the_section_hashes_to_its_stored_value_by_two_paths():
    stored = G.stored_hash(ROOT / REGISTRATION_REPLICATION_HASH)
    assert G.page_hash(PAGE, "replication") == stored
    raw = PAGE.read_bytes().replace(b"\r\n", b"\n")
    begin = raw.index(G.REPLICATION_BEGIN.encode() + b"\n") + len(G.REPLICATION_BEGIN) + 1
    end = raw.index(b"\n" + G.REPLICATION_END.encode()) + 1
    assert hashlib.sha256(raw[begin:end]).hexdigest() == stored
    assert stored in TEXT.split(G.REPLICATION_END)[1] and stored not in G.registered_section(TEXT, "replication")


def test_a_change_inside_moves_only_its_own_hash():
    hashes = {name: G.registration_hash(TEXT, name) for name in G.SECTIONS}
    assert len(set(hashes.values())) == len(hashes)
    inside = next(line for line in G.registered_section(TEXT, "replication").splitlines() if "810000" in line)
    changed = {name: G.registration_hash(TEXT.replace(inside, inside + " ", 1), name) for name in G.SECTIONS}
    assert changed["replication"] != hashes["replication"]
    assert all(changed[name] == hashes[name] for name in G.SECTIONS if name != "replication")
    assert TEXT.index(G.TRANSFORMER_END) < TEXT.index(G.REPLICATION_BEGIN)


def test_the_design_file_is_the_registered_one_and_the_loader_refuses_another(tmp_path):
    assert X.design_hash(DESIGN_FILE) == X.registered_design_hash(PAGE)
    assert X.load_replication(DESIGN_FILE, PAGE) == DESIGN
    other = tmp_path / "design.json"
    other.write_text(X.design_text({**DESIGN, "effect": 0.1}), encoding="utf-8")
    with pytest.raises(ValueError, match="registered replication design"):
        X.load_replication(other, PAGE)


def _close(found, expected, path="design"):
    """Equal, floats to a relative 1e-9 (the powers are sums of scipy's binomial terms)."""
    if isinstance(expected, dict):
        assert sorted(found) == sorted(expected), path
        for key in expected:
            _close(found[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(found) == len(expected), path
        for i, (a, b) in enumerate(zip(found, expected, strict=True)):
            _close(a, b, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-12), path
    else:
        assert found == expected, path


def test_the_design_is_what_the_rules_derive_from_the_registered_study():
    study = ROOT / S.STUDY_FOLDER / "study.json.gz"
    with gzip.open(study, "rt", encoding="utf-8") as handle:
        record = json.load(handle)
    design = S.load_design(ROOT / TRANSFORMER_DESIGN, PAGE)
    derived = X.derive_replication(record, design, X.design_hash(study), X.design_hash(ROOT / TRANSFORMER_DESIGN))
    _close(json.loads(X.design_text(derived)), DESIGN)
    assert DESIGN["basis"]["design_sha256"] == S.registered_design_hash(PAGE)


def test_the_section_states_the_design():
    section = G.registered_section(TEXT, "replication")
    seeds = DESIGN["seeds"]
    assert seeds == list(range(X.FIRST_SEED, X.FIRST_SEED + len(seeds)))
    assert f"{len(seeds)} paired seeds per language, **{seeds[0]}..{seeds[-1]}**" in section
    assert f"Minimum effect of interest**: {DESIGN['effect']:g}" in section
    for language in DESIGN["compared"]:
        c = DESIGN["choices"][language]
        row = f"| {language} | {c['shared_rate']:g} | {c['joint']['rate']:g} | {c['lag']['rate']:g}, "
        assert row in section
    for outcome, need in DESIGN["plan"]["needed"].items():
        assert f"| {outcome} | {need['discordance']:.3g} | {need['mcnemar']} | {need['tost']} |" in section
    assert len(seeds) == max(
        v for need in DESIGN["plan"]["needed"].values() for k, v in need.items() if k != "discordance"
    )


def _seeds_in(raw: bytes) -> set[int]:
    """Every seed of a JSON record: the integers of each list under a key "seeds", in an object at any depth,
    collected as the parser builds each object (walking the parsed records again took as long as parsing)."""
    found: set[int] = set()

    def collect(obj: dict) -> dict:
        seeds = obj.get("seeds")
        if isinstance(seeds, list) and all(isinstance(s, int) for s in seeds):
            found.update(seeds)
        return obj

    json.loads(raw, object_hook=collect)
    return found


def test_the_seeds_are_fresh():
    ours = set(DESIGN["seeds"])
    constants = [G.CONFIRMATORY_SEEDS, G.EXPLORATORY_SEEDS, PILOT_SEEDS, TIMING_SEEDS, PREDICTOR_SEEDS]
    constants += [CALIBRATION_SEEDS, S.load_design(ROOT / TRANSFORMER_DESIGN, PAGE)["seeds"]]
    assert not ours & {seed for seeds in constants for seed in seeds}
    for path in sorted((ROOT / "book" / "data").rglob("*.json*")):
        if path == DESIGN_FILE or path.parent == ROOT / X.REPLICATION_FOLDER:
            continue
        raw = path.read_bytes()
        assert not ours & _seeds_in(gzip.decompress(raw) if path.suffix == ".gz" else raw), path


def test_the_registration_was_committed_before_every_record():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if not RECORDS:
        pytest.skip("no record of the replication is committed yet")
    paths = [str(path.relative_to(ROOT)) for path in RECORDS]
    assert registered_before(ROOT, str(REGISTRATION_REPLICATION_HASH), paths) == []
    assert registered_before(ROOT, str(X.REPLICATION_DESIGN), paths) == []
    stored = G.stored_hash(ROOT / REGISTRATION_REPLICATION_HASH)
    for path in RECORDS:
        raw = path.read_bytes()
        G.check_record(json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw), stored)


def test_the_units_hold_every_row_once_and_every_seed():
    units = X.replication_units(DESIGN, "r" * 64)
    chunks = math.ceil(len(DESIGN["seeds"]) / DESIGN["unit_seeds"])
    assert len(units) == len(DESIGN["compared"]) * chunks
    for language in DESIGN["compared"]:
        mine = [u for u in units.values() if u["language"] == language]
        assert sorted(s for u in mine for s in u["seeds"]) == DESIGN["seeds"]
        c = DESIGN["choices"][language]
        expected = {
            ("joint", c["shared_rate"], None),
            ("lag", c["shared_rate"], 75),
            ("joint", c["joint"]["rate"], None),
        }
        expected.add(("lag", c["lag"]["rate"], round(300 * c["lag"]["warm_fraction"])))
        rows = {
            (r["schedule"], r["training"]["output_lr"], r["training"]["warm_steps"] if r["schedule"] == "lag" else None)
            for r in mine[0]["rows"]
        }
        assert rows == expected and len(mine[0]["rows"]) == len(expected)
        assert all(u["registration"] == "r" * 64 for u in mine)


def _unit(language, rows, seeds):
    return {
        "language": language,
        "seeds": seeds,
        "rows": [
            {
                "schedule": schedule,
                "training": {"output_lr": rate, "steps": 300, "warm_steps": warm},
                "values": values,
            }
            for schedule, rate, warm, values in rows
        ],
    }


def _values(failed, at256):
    return {"failed": failed, "recognised_at": [[True, True, r] for r in at256]}


def test_analyse_by_hand():
    """Two languages, 100 seeds. On A lag recognises at 256 on all 100 where joint recognises on none at the shared
    rate (McNemar p = 2 / 2^100, Holm over two: 4 / 2^100: helps); on B both recognise alike, no discordant seed:
    the TOST's p is the normal tail at -sqrt(100 * 0.05 / 0.95), 0.0109, twice that after Holm: equivalent; on
    failure B's joint fails on 10 seeds and lag on none (McNemar 2 / 2^10, Holm twice that: helps), A's none."""
    n = 100
    design = {
        "compared": ["A", "B"],
        "outcomes": list(R.REPLICATION_OUTCOMES),
        "variants": ["shared", "best"],
        "alpha": 0.05,
        "effect": 0.05,
        "seeds": list(range(n)),
        "choices": {
            lang: {"shared_rate": 0.1, "joint": {"rate": 0.1}, "lag": {"rate": 0.1, "warm_fraction": 0.125}}
            for lang in "AB"
        },
    }
    none, all_ = _values([False] * n, [False] * n), _values([False] * n, [True] * n)
    failing = _values([True] * 10 + [False] * (n - 10), [True] * n)  # B's joint fails on 10 seeds, lag on none
    units = {
        "A": _unit("A", [("joint", 0.1, 0, none), ("lag", 0.1, 75, all_), ("lag", 0.1, 38, none)], list(range(n))),
        "B": _unit("B", [("joint", 0.1, 0, failing), ("lag", 0.1, 75, all_), ("lag", 0.1, 38, all_)], list(range(n))),
    }
    found = X.analyse_replication({"seeds": list(range(n)), "units": units}, design)
    shared = found["recognition at 16 N0"]["shared"]
    assert (shared["A"]["lag_better"], shared["A"]["joint_better"]) == (n, 0)
    assert shared["A"]["p"] == pytest.approx(2 / 2**n, rel=1e-9, abs=0)
    assert shared["A"]["p_adjusted"] == pytest.approx(4 / 2**n, rel=1e-9, abs=0)
    assert shared["A"]["verdict"] == "helps" and shared["A"]["advantage"] == 1.0
    tail = 0.5 * math.erfc(math.sqrt(n * 0.05 / 0.95) / math.sqrt(2))
    assert shared["B"]["p_equivalence"] == pytest.approx(tail, rel=1e-9)
    assert shared["B"]["p_equivalence_adjusted"] == pytest.approx(2 * tail, rel=1e-9)
    assert shared["B"]["verdict"] == "equivalent"
    assert found["recognition at 16 N0"]["best"]["A"]["verdict"] == "equivalent"  # lag at 1/8 as joint: none
    failure = found["failure"]["shared"]
    assert (failure["B"]["lag_better"], failure["B"]["joint_better"]) == (10, 0)  # only joint fails: lag better
    assert failure["B"]["p_adjusted"] == pytest.approx(2 * 2 / 2**10, rel=1e-9) and failure["B"]["verdict"] == "helps"
    assert failure["A"]["verdict"] == "equivalent"
    with pytest.raises(ValueError, match="seeds"):
        X.analyse_replication({"seeds": [0], "units": units}, design)


def test_the_verdict_rule():
    entry = {"lag_better": 3, "joint_better": 9, "p_adjusted": 0.01, "p_equivalence_adjusted": 0.01}
    assert X.verdict(entry, 0.05) == "hurts"
    assert X.verdict({**entry, "p_adjusted": 0.2}, 0.05) == "equivalent"
    assert X.verdict({**entry, "p_adjusted": 0.2, "p_equivalence_adjusted": 0.2}, 0.05) == "undetermined"
