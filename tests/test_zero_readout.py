"""The zero-readout pilot of the transformer (lagtheory.experiments.exploratory.zero_readout).

The initial parameters are read back from the engine's own initialisation: the zero variants set exactly the
parameters they name to 0 and leave every other one equal to the standard draw on the same seed; a short run of
joint training shows the MLP stays at 0 when it starts there (its gradient is 0), while the readout moves; the
summary is checked on a record built by hand where the counts and p-values are written down.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from lagtheory.experiments.engine.cells import run_rows, scaled_parameters, standard_draws
from lagtheory.experiments.exploratory import zero_readout as Z
from lagtheory.experiments.paths import TRANSFORMER_DESIGN

ROOT = Path(__file__).resolve().parents[1]
DESIGN = json.loads((ROOT / TRANSFORMER_DESIGN).read_text(encoding="utf-8"))


def _start(initialisation):
    task, rows = Z.task_and_rows(DESIGN, "FIRST", initialisation)
    return task, rows, scaled_parameters(task, rows[0][1], standard_draws(task, [Z.ZERO_SEEDS[0]]))


@pytest.mark.parametrize(
    ("initialisation", "zeroed"),
    [("zero readout", {"readout_weight"}), ("zero readout and MLP", {"readout_weight", "mlp.w_in", "mlp.w_out"})],
)
def test_the_variants_zero_exactly_what_they_name(initialisation, zeroed):
    _, _, standard = _start("standard")
    _, _, variant = _start(initialisation)
    assert sorted(standard) == sorted(variant)
    for name, value in variant.items():
        if name.endswith(tuple(zeroed)):
            assert torch.count_nonzero(value) == 0 and torch.count_nonzero(standard[name]) > 0, name
        else:
            assert torch.equal(value, standard[name]), name


def test_an_mlp_that_starts_at_zero_stays_there_and_the_readout_moves():
    task, rows, _ = _start("zero readout and MLP")
    short = [(name, dataclasses.replace(config, steps=4, warm_steps=1)) for name, config in rows[:1]]
    final = run_rows(task, short, [Z.ZERO_SEEDS[0]], evaluate=False).final
    for name, value in final.items():
        if "mlp.w_" in name:
            assert np.count_nonzero(value) == 0, name
    assert np.count_nonzero(final["readout_weight"]) > 0


def _values(failed, at4, at16):
    return {"failed": failed, "recognised_at": [[True, a, b] for a, b in zip(at4, at16, strict=True)]}


def test_summary_by_hand():
    """Ten seeds: lag recognises at 16 N0 on all ten, joint on none (McNemar p = 2 / 2^10); at 4 N0 both on all;
    joint fails on three seeds and lag on none (p = 2 / 2^3 = 0.25)."""
    n = 10
    joint = _values([True] * 3 + [False] * 7, [True] * n, [False] * n)
    lag = _values([False] * n, [True] * n, [True] * n)
    record = {"results": {"L": {"zero readout": {"joint": joint, "lag": lag}}}}
    rows = {row["outcome"]: row for row in Z.summary(record)}
    at16 = rows["recognition at 16 N0"]
    assert (at16["joint"], at16["lag"], at16["lag_better"], at16["joint_better"]) == (0, n, n, 0)
    assert at16["p"] == pytest.approx(2 / 2**n) and at16["advantage"] == 1.0
    assert rows["recognition at 4 N0"]["p"] == 1.0 and rows["recognition at 4 N0"]["lag_better"] == 0
    failure = rows["failure"]
    assert (failure["lag_better"], failure["joint_better"], failure["p"]) == (3, 0, pytest.approx(0.25))
    with pytest.raises(ValueError, match="outcome"):
        Z.outcome_flags(joint, "recognition at 2 N0")
