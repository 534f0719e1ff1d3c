"""The committed confirmatory records (lagtheory.experiments.confirmatory.records): deterministic gzip, the
registration and trial checks on reading, the seeded sample, and the comparison of a re-run with planted
differences. The committed records themselves: every one carries the registration hash and only confirmatory
(or, for tuning, exploratory) seeds."""

import gzip
import json

import pytest

from lagtheory.experiments.confirmatory import records as R
from lagtheory.experiments.confirmatory.registration import CONFIRMATORY_SEEDS, EXPLORATORY_SEEDS, stored_hash
from lagtheory.experiments.paths import CONFIRMATORY_RECORDS

SEEDS = [100000, 100001, 100002, 100003]


def small_record():
    values = {
        "failed": [False, True, False, False],
        "recognised": [True, False, True, True],
        "horizon": [10, 3, 10, 12],
        "log10_test_loss": [-2.0, 0.7, -1.5, -3.25],
    }
    runs = {"joint rate=0.1": {"values": values}, "lag rate=0.1 warm=0.25 accounting=total": {"values": values}}
    return {
        "registration": stored_hash(),
        "trial": None,
        "seeds": SEEDS,
        "cells": {"FIRST/sgd/main/scale=1 ratio=1": {"runs": runs}, "FIRST/adam/main/scale=1 ratio=1": {"runs": runs}},
    }


def test_gzip_is_deterministic_and_reads_back(tmp_path):
    record = small_record()
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    R.write_gzipped(record, first)
    R.write_gzipped(record, second)
    assert first.read_bytes() == second.read_bytes()
    assert json.loads(gzip.decompress(first.read_bytes())) == record
    assert R.load_stage(first) == record
    plain = tmp_path / "grid.json"
    plain.write_text(json.dumps(record))
    assert R.load_stage(plain) == record


def test_reading_refuses_other_registrations_and_trials(tmp_path):
    path = tmp_path / "grid.json.gz"
    R.write_gzipped({**small_record(), "registration": "0" * 64}, path)
    with pytest.raises(ValueError, match="registration hash"):
        R.load_stage(path)
    R.write_gzipped({**small_record(), "trial": {"seeds": 2}}, path)
    with pytest.raises(ValueError, match="trial"):
        R.load_stage(path)
    with pytest.raises(ValueError, match="stage must be one of"):
        R.stage_path("pilot")


def test_the_sample_is_seeded_and_inside_the_record():
    record = small_record()
    sample = R.reproduction_sample(record, 7, cells=2, seeds=3)
    assert sample == R.reproduction_sample(record, 7, cells=2, seeds=3)
    for cell, key, seeds in sample:
        assert key in record["cells"][cell]["runs"] and len(set(seeds)) == 3 and set(seeds) <= set(SEEDS)


def test_mismatches_find_planted_differences():
    record = small_record()
    cell, key = "FIRST/sgd/main/scale=1 ratio=1", "joint rate=0.1"
    seeds = [100001, 100003]  # indices 1 (failed) and 3
    fresh = {"failed": [True, False], "recognised": [False, True], "horizon": [3, 12], "log10_test_loss": [9.0, -3.25]}
    # the failed seed's loss is not compared (9.0 against 0.7); everything else agrees
    assert R.mismatches(record, cell, key, seeds, fresh, atol=1e-6) == []
    assert R.mismatches(record, cell, key, seeds, {**fresh, "log10_test_loss": [0.7, -3.2499]}, 1e-6) == [
        "log10_test_loss"
    ]
    assert R.mismatches(record, cell, key, seeds, {**fresh, "log10_test_loss": [0.7, -3.2499]}, 1e-3) == []
    assert R.mismatches(record, cell, key, seeds, {**fresh, "failed": [False, False]}, 1e-6) == ["failed"]
    assert R.mismatches(record, cell, key, seeds, {**fresh, "horizon": [3, 13]}, 1e-6) == ["horizon"]


def test_committed_records_carry_the_hash_and_their_stage_seeds():
    stages = R.committed_stages()
    for stage, record in stages.items():
        expected = EXPLORATORY_SEEDS if stage == "tuning" else CONFIRMATORY_SEEDS
        assert list(record["seeds"]) == list(expected), stage
        assert record["stage"] == stage
    for name in ("analysis.json", "predictor.json"):
        path = CONFIRMATORY_RECORDS / name
        if path.exists():
            assert json.loads(path.read_text())["registration"] == stored_hash(), name
