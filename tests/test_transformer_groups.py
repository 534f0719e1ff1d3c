"""The transformer's groupings and margins (lagtheory.experiments.exploratory.transformer_groups): both groupings
partition the parameters, the first is the engine's, the second puts the embeddings apart; the margins of
snapshots (seeds, times), evaluated in chunks with the time axis moved first, agree with the task's own loss of
each model evaluated alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from lagtheory.experiments.engine.cells import TrainingConfig, initial_parameters
from lagtheory.experiments.exploratory import functional_timing as F
from lagtheory.experiments.exploratory import transformer_groups as TG
from lagtheory.experiments.exploratory.records import config_from_dict
from lagtheory.experiments.paths import TRANSFORMER_DESIGN
from lagtheory.experiments.tasks.transformer.task import TransformerLanguageRuns, TransformerSetting

ROOT = Path(__file__).resolve().parents[1]
DESIGN = json.loads((ROOT / TRANSFORMER_DESIGN).read_text())


def _task() -> TransformerLanguageRuns:
    return TransformerLanguageRuns("FIRST", config_from_dict(TransformerSetting, DESIGN["setting"]))


def test_both_groupings_partition_the_parameters():
    task = _task()
    names = sorted(task.parameter_shapes())
    found = TG.groupings(task)
    assert found["with embeddings"] == F.engine_grouping(task)
    for grouping in found.values():
        assert F.check_grouping(grouping, names)
    apart = found["embeddings apart"]
    assert apart["embeddings"] and all(name in TG.EMBEDDINGS for name in apart["embeddings"])
    assert all(".attention." in name for name in apart["attention"])
    assert "readout_weight" in apart["output"]


def test_the_margins_of_snapshots_are_each_model_s():
    task = _task()
    config = config_from_dict(TrainingConfig, DESIGN["training"])
    start = initial_parameters(task, config, [720_998, 720_999])
    rng = np.random.default_rng(3)
    times = TG.CHUNK + 3  # two chunks
    snapshots = {
        name: value[:, None] + 0.1 * torch.from_numpy(rng.normal(size=(2, times, *value.shape[1:])))
        for name, value in start.items()
    }
    margins = TG.transformer_margins(task)(snapshots)
    tokens, keep, labels = task.training_stream([F.EVALUATION_SEED], 1, TG.EVALUATION_WORDS).batch(0)
    for t in (0, TG.CHUNK - 1, TG.CHUNK, times - 1):
        one = {name: value[:, t][None] for name, value in snapshots.items()}  # (rows 1, seeds 2, ...)
        loss = task.losses(one, (tokens.expand(2, -1, -1), keep.expand(2, -1, -1), labels.expand(2, -1)))[0]
        assert torch.allclose(torch.nn.functional.softplus(-margins[:, t]).mean(dim=-1), loss, rtol=0, atol=1e-12), t
