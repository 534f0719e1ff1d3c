"""The registered transformer study (lagtheory.experiments.confirmatory.transformer; book/registration.md, its
transformer section).

The design is frozen data: the committed file is what the stated rules derive from the pilot's committed tuning
record (recomputed here), the registered section quotes its SHA-256 and is the text written from it, and the
loader refuses any other file. Git order: the registration's hash file was committed before every study
record that carries it (checked on this repository's history, and shown to catch the wrong order on a scratch
repository). The tuning rules and the gate are checked by hand on small synthetic pilots; the study's rows,
units and the record's hash are checked on the registered design.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lagtheory.experiments import run
from lagtheory.experiments.confirmatory import registration as G
from lagtheory.experiments.confirmatory import transformer as S
from lagtheory.experiments.confirmatory import transformer_analysis as A
from lagtheory.experiments.exploratory import transformer_pilot as P
from lagtheory.experiments.paths import (
    REGISTRATION_HASH,
    REGISTRATION_PAGE,
    REGISTRATION_TRANSFORMER_HASH,
    TRANSFORMER_DESIGN,
)

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / TRANSFORMER_DESIGN
PAGE = ROOT / REGISTRATION_PAGE
RECORDS = sorted((ROOT / S.STUDY_FOLDER).glob("*.json*")) if (ROOT / S.STUDY_FOLDER).exists() else []


def _values(test_losses, recognised_n0, failed=None, recognised=None):
    n = len(test_losses)
    return {
        "test_loss": list(test_losses),
        "recognised_at": [[bool(r), False, False] for r in recognised_n0],
        "failed": list(failed if failed is not None else [False] * n),
        "recognised": list(recognised if recognised is not None else [False] * n),
    }


def _row(rate, warm, values):
    return {"rate": rate, "warm_fraction": warm, "seeds": list(range(len(values["test_loss"]))), "values": values}


def test_tuning_rules_by_hand():
    """Two rates; lag at 1/8 and 1/4. Criterion = mean log10 of min(loss, log 2) (None counts as log 2)."""
    log2 = np.log(2.0)
    rows = {
        "joint rate=0.01": _row(0.01, None, _values([0.1, 0.1], [1, 1])),  # criterion -1
        "joint rate=0.1": _row(0.1, None, _values([0.1, 0.1], [1, 1])),  # tie: the smaller rate wins
        "lag rate=0.01 warm=0.125": _row(0.01, 0.125, _values([0.01, None], [1, 0])),  # (-2 + log10 log 2)/2
        "lag rate=0.01 warm=0.25": _row(0.01, 0.25, _values([1.0, 1.0], [0, 0])),  # capped: log10 log 2
        "lag rate=0.1 warm=0.125": _row(0.1, 0.125, _values([0.001, 0.001], [1, 1])),  # -3, the best lag
        "lag rate=0.1 warm=0.25": _row(0.1, 0.25, _values([0.001, 0.01], [1, 1])),  # -2.5
    }
    found = S.tuned(rows)
    assert found["joint"]["rate"] == 0.01 and found["joint"]["criterion"] == pytest.approx(-1.0)
    assert found["lag"] == {"rate": 0.1, "warm_fraction": 0.125, "criterion": pytest.approx(-3.0)}
    # shared: rate 0.01: (-1 + log10 log 2) / 2 = -0.58; rate 0.1: (-1 - 2.5) / 2 = -1.75 -> 0.1
    assert found["shared_rate"] == 0.1
    assert S.criterion(rows["lag rate=0.01 warm=0.125"]["values"]) == pytest.approx((-2 + np.log10(log2)) / 2)
    gate = S.gate(rows)
    assert gate["passes"] and gate["share"] == 1.0 and gate["row"] == "joint rate=0.01"
    failing = {k: _row(0.01, None, _values([0.1] * 10, [1] * 8 + [0] * 2)) for k in ("joint rate=0.01",)}
    assert not S.gate(failing)["passes"] and S.gate(failing)["share"] == 0.8


def test_planning_pools_the_discordant_pairs():
    rows = {
        "joint rate=0.01": _row(0.01, None, _values([0.1] * 4, [1] * 4, [True, True, False, False], [0, 0, 1, 1])),
        "lag rate=0.01 warm=0.25": _row(
            0.01, 0.25, _values([0.1] * 4, [1] * 4, [False, True, False, True], [1, 0, 1, 0])
        ),
    }
    choice = {"shared_rate": 0.01, "joint": {"rate": 0.01}, "lag": {"rate": 0.01, "warm_fraction": 0.25}}
    plan = S.planning({"A": rows, "B": rows}, {"A": choice, "B": choice}, ["A", "B"])
    # failure: only joint fails on seed 0 (lag's favour), only lag on seed 3 -> 1/4 each way
    assert plan["effects"]["shared"]["failure"]["p10"] == 0.25 and plan["effects"]["shared"]["failure"]["p01"] == 0.25
    # recognition: only lag on seed 0, only joint on seed 3
    assert plan["effects"]["best"]["recognition"] == {"p10": 0.25, "p01": 0.25, "needed": None}
    assert plan["level"] == 0.025 and plan["seeds"] == S.MAX_SEEDS


needs_design = pytest.mark.skipif(not DESIGN.exists(), reason="the design is not written yet")


@needs_design
def test_the_design_file_is_what_the_rules_derive_from_the_pilot():
    configuration = {**P.CHOSEN, "compute_dtype": S.COMPUTE_DTYPE}
    derived = S.derive_design(S.load_pilot("tuning", ROOT / S.PILOT_FOLDER), configuration)
    assert S.design_text(derived) == DESIGN.read_text(encoding="utf-8")


@needs_design
def test_the_registered_section_quotes_the_design_and_is_written_from_it():
    text = PAGE.read_text(encoding="utf-8")
    quoted = S.registered_design_hash(PAGE)
    assert quoted == S.design_hash(DESIGN)
    design = S.load_design(DESIGN, PAGE)
    assert G.registered_section(text, "transformer") == S.registered_text(design, quoted) + "\n"
    assert G.page_hash(PAGE, "transformer") == G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH)
    assert G.page_hash(PAGE) == G.stored_hash(ROOT / REGISTRATION_HASH)  # the confirmatory section did not move


@needs_design
def test_the_loader_refuses_another_design(tmp_path):
    changed = tmp_path / "design.json"
    changed.write_text(DESIGN.read_text(encoding="utf-8").replace('"alpha": 0.05', '"alpha": 0.1'))
    with pytest.raises(ValueError, match="not the registered design"):
        S.load_design(changed, PAGE)


@needs_design
def test_the_seeds_are_fresh_and_the_rows_are_the_design():
    design = S.load_design(DESIGN, PAGE)
    used = set(range(30)) | set(range(100, 106)) | set(P.PILOT_SEEDS) | set(G.CONFIRMATORY_SEEDS)
    assert not set(design["seeds"]) & used
    for language in [*design["compared"], design["control"]]:
        rows = S.study_rows(design, language)
        rates = [config.output_lr for name, config in rows if name == "joint"]
        assert rates == design["rates"]
        assert len(rows) == 2 * len(design["rates"]) + (language in design["compared"])
        if (
            language in design["compared"]
        ):  # lag at its best warm-up (1/8 for every compared language), besides the grid
            lag = design["choices"][language]["lag"]
            assert rows[-1][1].warm_steps == round(rows[-1][1].steps * lag["warm_fraction"])
            assert rows[-1][1].output_lr == lag["rate"] and lag["warm_fraction"] != 0.25
    units = S.study_units(design, "0" * 64)
    seeds = sorted(s for u in units.values() if u["language"] == design["control"] for s in u["seeds"])
    assert seeds == design["seeds"] and all(u["registration"] == "0" * 64 for u in units.values())


def _first_added(repository: Path, path: str) -> str | None:
    """The commit that first added ``path`` (None if never committed)."""
    found = subprocess.run(
        ["git", "-C", str(repository), "log", "--diff-filter=A", "--format=%H", "--", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return found[-1] if found else None


def registered_before(repository: Path, registration: str, records: list[str]) -> list[str]:
    """The records (paths) not committed strictly after the commit that added ``registration``, on its line."""
    first = _first_added(repository, registration)
    late = []
    for record in records:
        added = _first_added(repository, record)
        ancestor = subprocess.run(
            ["git", "-C", str(repository), "merge-base", "--is-ancestor", str(first), str(added)], check=False
        )
        if first is None or added is None or added == first or ancestor.returncode != 0:
            late.append(record)
    return late


def test_the_order_check_catches_a_record_committed_first(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "record.json").write_text("{}")
    git("add", "record.json")
    git("commit", "-q", "-m", "a record first")
    (tmp_path / "hash").write_text("x")
    (tmp_path / "later.json").write_text("{}")
    git("add", "hash")
    git("commit", "-q", "-m", "then the registration")
    git("add", "later.json")
    git("commit", "-q", "-m", "then a record")
    assert registered_before(tmp_path, "hash", ["record.json", "later.json"]) == ["record.json"]


@pytest.mark.skipif(not RECORDS, reason="no study record is committed yet")
def test_the_registration_was_committed_before_every_study_record():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = [str(path.relative_to(ROOT)) for path in RECORDS]
    assert registered_before(ROOT, str(REGISTRATION_TRANSFORMER_HASH), paths) == []
    assert registered_before(ROOT, str(TRANSFORMER_DESIGN), paths) == []


@pytest.mark.skipif(not RECORDS, reason="no study record is committed yet")
def test_every_study_record_carries_the_transformer_hash():
    stored = G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH)
    for path in RECORDS:
        raw = path.read_bytes()
        content = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
        G.check_record(content, stored)


def test_the_chosen_configuration_is_the_configuration_stages_choice():
    record = S.load_pilot("configuration", ROOT / S.PILOT_FOLDER)
    assert P.choose_configuration(record) == P.CHOSEN
    assert record["exploratory"] is True and "registration" not in record
    seeds = {s for unit in record["units"].values() for s in unit["seeds"]}
    assert seeds == set(P.CONFIGURATION_SEEDS)


@pytest.mark.parametrize(("n", "discordance", "level"), [(50, 0.0, 0.05), (120, 0.03, 0.01), (200, 0.08, 0.0167)])
def test_equivalence_power_by_enumeration(n, discordance, level):
    import scipy.stats

    rejected = [k for k in range(n + 1) if scipy.stats.binomtest(k, n, 0.1, alternative="less").pvalue < level]
    expected = sum(scipy.stats.binom.pmf(k, n, discordance) for k in rejected)
    assert S.equivalence_power(n, discordance, level) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def _unit(language, rows, seeds):
    """A study unit as run_unit returns it, rows (schedule, rate, warm fraction, per-seed values)."""
    return {
        "language": language,
        "seeds": seeds,
        "rows": [
            {
                "schedule": schedule,
                "training": {"output_lr": rate, "warm_steps": round(300 * (warm or 0.25)), "steps": 300},
                "values": values,
            }
            for schedule, rate, warm, values in rows
        ],
    }


def test_analyse_by_hand(monkeypatch):
    """A toy design (two compared languages, two rates, six seeds in two units) and a record built by hand:
    the counts, rates, windows and the control's count are the ones written here; the verdicts follow Holm."""
    stored = "a" * 64
    monkeypatch.setattr(A, "stored_hash", lambda path: stored)
    design = {
        "compared": ["L1", "L2"],
        "control": "C",
        "rates": [0.01, 0.1],
        "seeds": list(range(6)),
        "choices": {
            lang: {"shared_rate": 0.1, "joint": {"rate": 0.01}, "lag": {"rate": 0.1, "warm_fraction": 0.125}}
            for lang in ("L1", "L2")
        },
        "plan": {"power": {v: dict.fromkeys(S.OUTCOMES, 0.5) for v in S.VARIANTS}},
    }
    ok = {"failed": [False] * 3, "recognised": [True] * 3, "recognised_at": [[True, True, True]] * 3}
    bad = {"failed": [True] * 3, "recognised": [False] * 3, "recognised_at": [[True, False, False]] * 3}
    units = {}
    for lang in ("L1", "L2"):
        for start in (0, 3):
            lag_fails = lang == "L2"  # on L2 lag fails on every seed at 0.1 (T/4), joint never
            units[f"{lang}-{start}"] = _unit(
                lang,
                [
                    ("joint", 0.01, None, ok),
                    ("lag", 0.01, 0.25, ok),
                    ("joint", 0.1, None, ok),
                    ("lag", 0.1, 0.25, bad if lag_fails else ok),
                    ("lag", 0.1, 0.125, ok),
                ],
                [start, start + 1, start + 2],
            )
    for start in (0, 3):
        units[f"C-{start}"] = _unit(
            "C",
            [("joint", r, None, bad) for r in (0.01, 0.1)] + [("lag", r, 0.25, bad) for r in (0.01, 0.1)],
            [start, start + 1, start + 2],
        )
    record = {"registration": stored, "seeds": list(range(6)), "units": units}
    levels = []  # the Bonferroni family of each window: the registration's, over the compared languages (here 2)
    window_outcome = A.window_outcome
    monkeypatch.setattr(A, "window_outcome", lambda *a, **k: levels.append(k.get("cells")) or window_outcome(*a, **k))
    found = S.analyse(record, design, resamples=200)
    assert levels == [2, 2]
    shared = found["outcomes"]["failure"]["shared"]
    assert (shared["L1"]["lag_better"], shared["L1"]["joint_better"]) == (0, 0)
    assert (shared["L2"]["lag_better"], shared["L2"]["joint_better"]) == (0, 6)
    assert shared["L2"]["p"] == pytest.approx(2 / 64) and shared["L2"]["lag_rate"] == 1.0
    # Holm over two: L2's p = 1/32 times 2 = 1/16 > 0.05: undetermined; L1: no discordance; equivalence p = 0.9^6
    assert shared["L2"]["verdict"] == "undetermined" and shared["L1"]["verdict"] == "undetermined"
    assert shared["L1"]["p_equivalence"] == pytest.approx(0.9**6)
    best = found["outcomes"]["recognition"]["best"]
    assert best["L2"]["lag_rate"] == 1.0 and best["L2"]["joint_rate"] == 1.0  # joint at 0.01, lag at 0.1 and 1/8
    assert found["lengths"]["L2"]["shared"] == {"joint": [6, 6, 6], "lag": [6, 0, 0]}
    window = found["window"]
    assert window["L1"]["joint_window"] == [0.01, 0.1] and window["L1"]["lag_window"] == [0.01, 0.1]
    assert window["L2"]["lag_window"] == [0.01] and window["L2"]["ratio"] == 0.5
    assert found["control"] == dict.fromkeys(
        ["joint rate=0.01", "joint rate=0.1", "lag rate=0.01 warm=0.25", "lag rate=0.1 warm=0.25"], 0
    )
    with pytest.raises(ValueError, match="registration"):
        S.analyse({**record, "registration": "b" * 64}, design)


def _flags(failed: bool, recognised: bool, n: int) -> dict:
    """Per-seed values of a row where every seed has the same outcome (recognised at every test length or at N0 only)."""
    return {
        "failed": [failed] * n,
        "recognised": [recognised] * n,
        "recognised_at": [[True, recognised, recognised]] * n,
    }


def test_analyse_verdicts_by_hand(monkeypatch):
    """Three compared languages (one family per outcome and variant, as registered), 40 seeds in two units, every
    seed of a row alike, so each number is derived here by hand:

    shared rate 0.1. L1: joint fails and does not recognise, lag succeeds and recognises on all 40 seeds: 40
    discordant pairs in lag's favour, McNemar p = 2 / 2^40, Holm over 3 -> 3 / 2^39 < 0.05: helps on both
    outcomes. L2: the mirror image: hurts. L3: both succeed on every seed: no discordant pair, McNemar p = 1;
    equivalence p = P(Bin(40, 0.1) = 0) = 0.9^40 = 0.01478; the other two have 40 of 40 discordant (p = 1), so
    Holm multiplies 0.9^40 by 3: 0.0443 < 0.05: equivalent. Best vs best (joint and lag at 0.01, where every
    run succeeds): all three equivalent (Holm: 3 x 0.9^40, then 2 x, then 1 x, kept monotone: 0.0443).

    Windows (a rate is in when at least 90% of the seeds do not fail): L1 joint {0.01}, lag {0.01, 0.1}: ratio 2;
    L2 the mirror: 0.5; L3 both {0.01, 0.1}: 1. Every bootstrap resample of identical seeds gives the same ratio,
    so the Bonferroni interval is [2, 2] (helps), [0.5, 0.5] (hurts), [1, 1] (undetermined).
    """
    stored = "c" * 64
    monkeypatch.setattr(A, "stored_hash", lambda path: stored)
    languages = ("L1", "L2", "L3")
    seeds = list(range(40))
    design = {
        "compared": list(languages),
        "control": "C",
        "rates": [0.01, 0.1],
        "seeds": seeds,
        "choices": {
            lang: {"shared_rate": 0.1, "joint": {"rate": 0.01}, "lag": {"rate": 0.01, "warm_fraction": 0.25}}
            for lang in languages
        },
        "plan": {"power": {v: dict.fromkeys(S.OUTCOMES, 0.5) for v in S.VARIANTS}},
    }
    good, bad = (True, False), (False, True)  # (succeeds, fails): the argument order of _flags is failed, recognised
    at_shared = {"L1": (bad, good), "L2": (good, bad), "L3": (good, good)}  # (joint, lag) at 0.1
    units = {}
    for lang in [*languages, "C"]:
        for start in (0, 20):
            n = 20
            joint, lag = at_shared.get(lang, (bad, bad))
            rows = [
                ("joint", 0.01, None, _flags(False, True, n)),
                ("lag", 0.01, 0.25, _flags(False, True, n)),
                ("joint", 0.1, None, _flags(not joint[0], joint[0], n)),
                ("lag", 0.1, 0.25, _flags(not lag[0], lag[0], n)),
            ]
            units[f"{lang}-{start}"] = _unit(lang, rows, seeds[start : start + n])
    found = S.analyse({"registration": stored, "seeds": seeds, "units": units}, design, resamples=500)
    expected = {"L1": "helps", "L2": "hurts", "L3": "equivalent"}
    for outcome in S.OUTCOMES:
        shared = found["outcomes"][outcome]["shared"]
        for lang in languages:
            assert shared[lang]["verdict"] == expected[lang], (outcome, lang)
        assert (shared["L1"]["lag_better"], shared["L1"]["joint_better"]) == (40, 0)
        assert (shared["L2"]["lag_better"], shared["L2"]["joint_better"]) == (0, 40)
        assert shared["L1"]["p"] == pytest.approx(2.0**-39, rel=1e-9)
        assert shared["L1"]["p_adjusted"] == pytest.approx(3 * 2.0**-39, rel=1e-9)
        assert shared["L3"]["p_equivalence"] == pytest.approx(0.9**40, rel=1e-9)
        assert shared["L3"]["p_equivalence_adjusted"] == pytest.approx(3 * 0.9**40, rel=1e-9)
        best = found["outcomes"][outcome]["best"]
        assert {lang: best[lang]["verdict"] for lang in languages} == dict.fromkeys(languages, "equivalent")
        assert all(best[lang]["p_equivalence_adjusted"] == pytest.approx(3 * 0.9**40, rel=1e-9) for lang in languages)
    assert found["lengths"]["L1"]["shared"] == {"joint": [40, 0, 0], "lag": [40, 40, 40]}
    window = found["window"]
    assert (window["L1"]["ratio"], window["L1"]["interval_bonferroni"], window["L1"]["verdict"]) == (
        2.0,
        [2.0, 2.0],
        "helps",
    )
    assert (window["L2"]["ratio"], window["L2"]["interval_bonferroni"], window["L2"]["verdict"]) == (
        0.5,
        [0.5, 0.5],
        "hurts",
    )
    assert (window["L3"]["ratio"], window["L3"]["verdict"]) == (1.0, "undetermined")
    assert found["control"] == {
        "joint rate=0.01": 40,
        "lag rate=0.01 warm=0.25": 40,
        "joint rate=0.1": 0,
        "lag rate=0.1 warm=0.25": 0,
    }


def test_a_finished_only_record_holds_the_finished_units_and_lists_the_others(monkeypatch, tmp_path):
    """``--finished-only`` runs nothing: the record holds the units whose files are in the stage's folder and
    lists the rest under "missing"."""
    from lagtheory.experiments.engine.distributed import fingerprint, write_atomically

    units = {"u-a": {"language": "A", "rows": [1]}, "u-b": {"language": "B", "rows": [2]}}
    monkeypatch.setattr(P, "STAGE_UNITS", {"diagnostics": lambda: units})
    monkeypatch.setattr(P, "OUTPUT_FOLDER", tmp_path)
    monkeypatch.setattr(P, "run_units", lambda *a, **k: pytest.fail("--finished-only must not run units"))
    folder = tmp_path / "diagnostics.units"
    folder.mkdir()
    write_atomically(folder / "u-a.json", {"name": "u-a", "fingerprint": fingerprint(units["u-a"]), "result": {"x": 1}})
    output = run.main(["transformer-pilot", "--stage", "diagnostics", "--finished-only", "--quiet"])
    with gzip.open(output, "rt", encoding="utf-8") as handle:
        record = json.load(handle)
    assert record["units"] == {"u-a": {"language": "A", "x": 1}}
    assert record["missing"] == ["u-b"] and record["exploratory"] is True
    assert record["command"].startswith("python -m lagtheory.experiments.run transformer-pilot --stage diagnostics")


def test_analyse_command_writes_an_infinite_window_ratio(monkeypatch, tmp_path):
    """Where only lag has a window (joint fails at every rate, lag at none) the ratio is +inf, every resample
    gives +inf, so the interval is [inf, inf] and lag helps; the command writes it and the file reads back."""
    stored = "d" * 64
    monkeypatch.setattr(A, "stored_hash", lambda path: stored)
    design = {
        "compared": ["L1"],
        "control": "C",
        "rates": [0.01, 0.1],
        "seeds": [0, 1, 2],
        "choices": {"L1": {"shared_rate": 0.1, "joint": {"rate": 0.1}, "lag": {"rate": 0.1, "warm_fraction": 0.25}}},
        "plan": {"power": {v: dict.fromkeys(S.OUTCOMES, 0.5) for v in S.VARIANTS}},
    }
    monkeypatch.setattr(A, "load_design", lambda: design)
    good, bad = _flags(False, True, 3), _flags(True, False, 3)
    rows = {
        "L1": [
            ("joint", 0.01, None, bad),
            ("lag", 0.01, 0.25, good),
            ("joint", 0.1, None, bad),
            ("lag", 0.1, 0.25, good),
        ],
        "C": [("joint", 0.01, None, bad), ("lag", 0.01, 0.25, bad), ("joint", 0.1, None, bad), ("lag", 0.1, 0.25, bad)],
    }
    record = {"registration": stored, "seeds": [0, 1, 2], "units": {k: _unit(k, r, [0, 1, 2]) for k, r in rows.items()}}
    path = tmp_path / "study.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(record, handle)
    # through the module command the registered section quotes, an alias of the one command
    output = run.alias(
        "lagtheory.experiments.confirmatory.transformer",
        ["analyse", "--record", str(path), "--output", str(tmp_path / "analysis.json")],
    )
    window = json.loads(output.read_text())["window"]["L1"]
    assert window["ratio"] == float("inf") and window["interval_bonferroni"] == [float("inf")] * 2
    assert window["verdict"] == "helps"
    assert json.loads(output.read_text())["seeds_per_language"] == 3  # a count: "seeds" would be read as a seed list
