"""The design each study's code builds today is the design of its committed record.

A record (book/data) was run with one design: its tasks, its cells and their configurations (schedules,
step sizes, budgets, settings), its seeds. The code that builds that design may change later (a new
language in a study, a new schedule among the compared ones, a new rate in a grid); then it no longer
builds what the record holds, and every chapter that reads the record would describe a design the code
does not run. Each test below rebuilds a study's design from the code alone (the calibrated base rates are
the only input taken from the record, as a run takes them from its calibration) and compares it with the
committed record, cell by cell; a difference fails the test with the record's path and what differs.

For the registered confirmatory study the design is frozen data
(lagtheory.experiments.confirmatory.registration): its tasks, cells, seeds, grid and runs must equal
those of every committed stage record.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lagtheory.experiments.confirmatory import design as CD
from lagtheory.experiments.confirmatory.records import committed_stages
from lagtheory.experiments.confirmatory.registration import CONFIRMATORY_SEEDS, EXPLORATORY_SEEDS, stored_hash
from lagtheory.experiments.confirmatory.stages import cell_configuration as confirmatory_configuration
from lagtheory.experiments.confirmatory.tuning import best_runs
from lagtheory.experiments.engine.config import json_ready
from lagtheory.experiments.exploratory.entries import cell_configuration, design_constants
from lagtheory.experiments.exploratory.records import load_record
from lagtheory.experiments.exploratory.studies import study
from lagtheory.experiments.paths import BOOK_DATA, CONFIRMATORY_RECORDS, REGISTRATION_HASH

ROOT = Path(__file__).resolve().parents[1]
RECORDS = sorted((ROOT / BOOK_DATA).glob("summary_*.json"))


def differences(built: Mapping[str, Any], stored: Mapping[str, Any], what: str) -> list[str]:
    """The cells (or runs) only one side has, and the fields of common ones that differ, in words."""
    found = []
    if missing := sorted(set(stored) - set(built)):
        found.append(f"{len(missing)} {what} of the record the code no longer builds, e.g. {missing[:3]}")
    if extra := sorted(set(built) - set(stored)):
        found.append(f"{len(extra)} {what} the code builds that the record lacks, e.g. {extra[:3]}")
    for name in sorted(set(built) & set(stored)):
        if built[name] != stored[name]:
            fields = sorted(
                key for key in set(built[name]) | set(stored[name]) if built[name].get(key) != stored[name].get(key)
            )
            found.append(
                f"{what} {name!r}: {', '.join(fields)} differ "
                f"(code {[built[name].get(key) for key in fields]}, record {[stored[name].get(key) for key in fields]})"
            )
    return found


def contradicts(path: Path, found: list[str], shown: int = 12) -> str:
    """The failure message: the record's path, then the first ``shown`` differences."""
    more = [f"... and {len(found) - shown} more"] if len(found) > shown else []
    lines = [*found[:shown], *more]
    return f"the code's design contradicts the committed record {path.relative_to(ROOT)}:\n  " + "\n  ".join(lines)


@pytest.mark.parametrize("path", RECORDS, ids=[path.stem for path in RECORDS])
def test_each_study_builds_the_design_of_its_committed_record(path):
    record = load_record(path)
    the_study = study(record["study"])
    found = []
    tasks = sorted({entry["configuration"]["task"] for entry in record["cells"].values()})
    if sorted(design.name for design in the_study.tasks) != tasks:
        found.append(f"tasks: code {sorted(design.name for design in the_study.tasks)}, record {tasks}")
    if record["seeds"] != list(range(the_study.seeds)):
        found.append(f"seeds: code 0..{the_study.seeds - 1}, record {record['seeds'][:3]}.. ({len(record['seeds'])})")
    constants = design_constants() if the_study.constants is None else json_ready(dict(the_study.constants))
    if constants != record["design"]:
        keys = sorted(
            key for key in set(constants) | set(record["design"]) if constants.get(key) != record["design"].get(key)
        )
        found.append(f"design constants differ: {keys}")
    built = {}
    for design in the_study.tasks:
        for optimiser in the_study.optimisers:
            rates = record["calibration"].get(design.name, {}).get(optimiser, {}).get("base_rates", {})
            if the_study.calibrated and not rates:
                continue  # a task the record lacks: reported above
            for cell in the_study.cells(design, optimiser, rates):
                built[cell.name] = cell_configuration(cell)
    found += differences(built, {name: entry["configuration"] for name, entry in record["cells"].items()}, "cells")
    assert not found, contradicts(path, found)


@pytest.fixture(scope="module")
def stages():
    return committed_stages(ROOT / CONFIRMATORY_RECORDS, stored_hash(ROOT / REGISTRATION_HASH))


def registered_cells(validation_set: bool) -> dict[str, dict[str, Any]]:
    designs = {design.name: design for _, design in CD.confirmatory_tasks()}
    return {
        cell.name: confirmatory_configuration(cell, designs[cell.task], validation_set)
        for cell in CD.confirmatory_cells()
    }


@pytest.mark.parametrize(
    ("stage", "seeds", "runs"),
    [
        ("grid", CONFIRMATORY_SEEDS, CD.grid_runs),
        ("tuning", EXPLORATORY_SEEDS, CD.tuning_runs),
        ("best", CONFIRMATORY_SEEDS, None),
    ],
)
def test_the_registered_cells_and_runs_are_those_of_each_committed_stage(stages, stage, seeds, runs):
    path = ROOT / CONFIRMATORY_RECORDS / f"{stage}.json.gz"
    record = stages[stage]
    found = []
    if record["seeds"] != list(seeds):
        found.append(f"seeds: code {seeds[0]}..{seeds[-1]}, record {record['seeds'][:3]}..")
    stored = {name: entry["configuration"] for name, entry in record["cells"].items()}
    found += differences(registered_cells(stage == "tuning"), stored, "cells")
    for name, entry in record["cells"].items():
        optimiser = entry["configuration"]["optimiser"]
        planned = runs(optimiser) if runs is not None else best_runs(record["choices"][name])
        built = {run.key: run.as_dict() for run in planned}
        kept = {
            key: {field: run[field] for field in ("schedule", "base_rate", "warm_fraction", "accounting")}
            for key, run in entry["runs"].items()
        }
        found += differences(built, kept, f"runs of {name}")
    assert not found, contradicts(path, found)


def test_the_validation_cells_are_those_of_the_committed_validation_stage(stages):
    path = ROOT / CONFIRMATORY_RECORDS / "validation.json.gz"
    record = stages["validation"]
    found = []
    if record["seeds"] != list(CONFIRMATORY_SEEDS):
        found.append(f"seeds: record {record['seeds'][:3]}..")
    built = {
        f"{design.name}/{optimiser}/validation/scale={scale:g} ratio={ratio:g}"
        for _, design in CD.confirmatory_tasks()
        for optimiser in CD.OPTIMISERS
        for scale, ratio in CD.validation_levels()
    }
    stored = set(record["cells"]) | set(record["uncalibrated"])
    found += differences({name: {} for name in built}, {name: {} for name in stored}, "validation cells")
    for name, entry in record["cells"].items():
        rate = entry["calibrated_rate"]
        expected = {CD.Run("joint", rate, None, "both").key, CD.Run("lag", rate, CD.GRID_WARM_FRACTION, "total").key}
        if set(entry["runs"]) != expected:
            found.append(f"runs of {name}: code {sorted(expected)}, record {sorted(entry['runs'])}")
    assert not found, contradicts(path, found)


def test_the_lag_timing_record_is_the_design_the_code_builds():
    """book/data/lag_timing.json (the parameter readings): its seeds, probe words and, per model and language,
    its training are what lagtheory.experiments.exploratory.lag_timing builds today."""
    import json

    from lagtheory.experiments.exploratory import lag_timing as LT
    from lagtheory.experiments.exploratory.records import config_to_dict
    from lagtheory.experiments.paths import TRANSFORMER_DESIGN

    path = ROOT / BOOK_DATA / "lag_timing.json"
    record = json.loads(path.read_text())
    models = LT.default_models(json.loads((ROOT / TRANSFORMER_DESIGN).read_text()))
    found = []
    if record["seeds"] != list(LT.TIMING_SEEDS):
        found.append("seeds differ")
    if record["probe"] != {"seed": LT.PROBE_SEED, "per_class": LT.PROBE_PER_CLASS, "rules": LT.RULES}:
        found.append("probe words differ")
    built = {
        f"{m}/{lang}": {"training": config_to_dict(c)} for m, langs in models.items() for lang, (_, c) in langs.items()
    }
    stored = {
        f"{m}/{lang}": {"training": entry["training"]}
        for m, langs in record["models"].items()
        for lang, entry in langs.items()
    }
    found += differences(built, stored, "language")
    assert not found, contradicts(path, found)


def test_the_lag_study_records_are_the_design_the_code_builds():
    """book/data/lag_study: the pilot is the pilot the code runs (its seeds, languages, training, evaluation
    words) and the registered runs are the frozen design's; the groups are the engine's."""
    import json

    from lagtheory.experiments.confirmatory import lag_study as LS
    from lagtheory.experiments.exploratory import functional_timing as F
    from lagtheory.experiments.exploratory.records import config_to_dict
    from lagtheory.experiments.exploratory.studies import LANGUAGE_SETTING
    from lagtheory.experiments.paths import LAG_DESIGN, LAG_RECORDS
    from lagtheory.experiments.tasks.languages.catalogue import TASKS
    from lagtheory.experiments.tasks.languages.task import LANGUAGE_TRAINING, LanguageRuns

    design = json.loads((ROOT / LAG_DESIGN).read_text())
    evaluation = {"seed": F.EVALUATION_SEED, "words": F.EVALUATION_WORDS}
    expected = {
        "pilot.json": (list(LS.PILOT_SEEDS), list(LS.LANGUAGES), config_to_dict(LANGUAGE_TRAINING)),
        "study.json": (design["seeds"], design["languages"], design["training"]),
    }
    assert (design["languages"], design["training"], design["evaluation"]) == (
        list(LS.LANGUAGES),
        config_to_dict(LANGUAGE_TRAINING),
        evaluation,
    )
    for name, (seeds, languages, training) in expected.items():
        path = ROOT / LAG_RECORDS / name
        if not path.exists():
            continue
        record = json.loads(path.read_text())
        found = []
        if record["seeds"] != seeds:
            found.append("seeds differ")
        if record["training"] != training or record["evaluation"] != evaluation:
            found.append("training or evaluation words differ")
        if sorted(record["languages"]) != sorted(languages):
            found.append(f"languages differ: {list(record['languages'])}")
        for lang, entry in record["languages"].items():
            if entry["groups"] != list(F.engine_grouping(LanguageRuns(TASKS[lang], LANGUAGE_SETTING))):
                found.append(f"{lang}: groups differ")
        assert not found, contradicts(path, found)
