"""The zero-readout variant of the registered transformer: an exploratory pilot on seeds of its own.

On the registered transformer the random initial readout already carries a decision, and the attention group
learns against it; the theory's mechanism (the attention's gradient is proportional to the readout, so the
readout must move first) binds when the readout starts at zero. This pilot trains the registered study's model,
data, training and test words (its design file) with the readout initialised at zero, joint against lag
(warm-up T/4) at each compared language's registered shared rate, on :data:`ZERO_SEEDS`, used by no other run,
in three initialisations (:data:`INITIALISATIONS`):

* ``"standard"``: the registered study's (the reference, on the same seeds);
* ``"zero readout"``: the readout's weight also starts at 0 (:class:`ZeroReadoutRuns`; its bias already does),
  the MLP as drawn;
* ``"zero readout and MLP"``: the whole output group (readout and MLP) starts at 0 (:class:`ZeroOutputRuns`):
  with its weights and biases at 0 the MLP's gradient is 0, so it stays at 0 (a saddle), leaving the
  attention block and the readout.

Outcomes per seed: failure, and recognition at 4 N0 and at 16 N0 (every random and hard test word of that
length right); :func:`summary` gives per language, initialisation and outcome both schedules' counts, the
discordant seeds, lag's advantage and McNemar's exact p (exploratory, unadjusted).

The command (``python -m lagtheory.experiments.run zero-readout [--output PATH]``) writes the record
(default ``runs/transformer_zero_readout.json``; the committed one is ``book/data/transformer_zero_readout.json``),
reading the registered design file (``book/data/transformer_design.json``, whose SHA-256 the record keeps).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..engine.cells import TrainingConfig, run_rows
from ..parameters import fill_doc
from ..paths import BOOK_DATA, TRANSFORMER_DESIGN
from ..statistics.paired import mcnemar_exact
from ..tasks.transformer.task import TransformerLanguageRuns, TransformerSetting, row_outcomes
from .records import config_from_dict, versions
from .transformer_pilot import training_at

ZERO_SEEDS: tuple[int, ...] = tuple(range(800_000, 800_016))
"""The pilot's seeds, used by no other run."""
INITIALISATIONS = ("standard", "zero readout", "zero readout and MLP")
"""The three initialisations compared; the standard one, the readout weight at zero, and the readout and MLP weights at zero."""
RECORD = BOOK_DATA / "transformer_zero_readout.json"
"""The committed record."""
FORMAT = "lagtheory-transformer-zero-readout-1"
OUTCOMES = ("failure", "recognition at 4 N0", "recognition at 16 N0")
"""The outcomes reported, each apart; failure, recognition at 4 and at 16 times the training length."""


class ZeroReadoutRuns(TransformerLanguageRuns):
    """The registered transformer's task with the readout's weight starting at 0 as well (module docstring)."""

    ALSO_ZERO: tuple[str, ...] = ("readout_weight",)
    """Endings of the parameter names that start at 0 besides the model's own (its biases)."""

    def zero_at_start(self) -> tuple[str, ...]:
        """The parameters that start at 0: the model's (biases) and those named by :attr:`ALSO_ZERO`.

        Returns
        -------
        tuple of str
            Parameter names.
        """
        also = tuple(name for name, _ in self.model.named_parameters() if name.endswith(self.ALSO_ZERO))
        return tuple(dict.fromkeys((*super().zero_at_start(), *also)))


class ZeroOutputRuns(ZeroReadoutRuns):
    """The task with the whole output group (the readout and every MLP weight) starting at 0."""

    ALSO_ZERO = ("readout_weight", "mlp.w_in", "mlp.w_out")


@fill_doc
def task_and_rows(
    design: Mapping[str, Any], language: str, initialisation: str
) -> tuple[TransformerLanguageRuns, list[tuple[str, TrainingConfig]]]:
    """The task and the two rows (joint, lag at T/4, both at the language's shared rate) of an initialisation.

    Parameters
    ----------
    %(design)s
    %(language)s
    initialisation : str
        One of :data:`INITIALISATIONS`.

    Returns
    -------
    tuple
        (task, rows).
    """
    if initialisation not in INITIALISATIONS:
        raise ValueError(f"initialisation must be one of {INITIALISATIONS}, got {initialisation!r}")
    setting = config_from_dict(TransformerSetting, design["setting"])
    base = config_from_dict(TrainingConfig, design["training"])
    rate = design["choices"][language]["shared_rate"]
    rows = [("joint", training_at(rate, base=base)), ("lag", training_at(rate, 0.25, base=base))]
    runs = {
        "standard": TransformerLanguageRuns,
        "zero readout": ZeroReadoutRuns,
        "zero readout and MLP": ZeroOutputRuns,
    }
    runs = runs[initialisation]
    return runs(language, setting), rows


@fill_doc
def run_pilot(design: Mapping[str, Any]) -> dict[str, Any]:
    """Train every language and initialisation (joint and lag on :data:`ZERO_SEEDS`, one batched call each) and
    return the record: per language and initialisation the per-seed ``failed`` and ``recognised_at``, with the
    CPU seconds.

    Parameters
    ----------
    %(design)s

    Returns
    -------
    dict
        The record (exploratory).
    """
    torch.set_num_threads(1)
    start = time.process_time()
    results: dict[str, dict[str, Any]] = {}
    for language in design["compared"]:
        results[language] = {}
        for initialisation in INITIALISATIONS:
            task, rows = task_and_rows(design, language, initialisation)
            result = run_rows(task, rows, list(ZERO_SEEDS))
            outcomes = row_outcomes(result.metrics, result.losses)
            results[language][initialisation] = {
                schedule: {
                    "failed": [bool(v) for v in outcomes["failed"][k]],
                    "recognised_at": [[bool(v) for v in seed] for seed in outcomes["recognised_at"][k]],
                }
                for k, (schedule, _) in enumerate(rows)
            }
    return {
        "format": FORMAT,
        "exploratory": True,
        "seeds": list(ZERO_SEEDS),
        "lengths": [design["setting"]["max_train_length"] * f for f in (1, 4, 16)],
        "versions": versions(),
        "cpu_seconds": time.process_time() - start,
        "results": results,
    }


def outcome_flags(values: Mapping[str, Any], outcome: str) -> np.ndarray:
    """Per seed, one of :data:`OUTCOMES` of a schedule's stored values.

    Parameters
    ----------
    values : mapping
        ``failed`` and ``recognised_at`` (seeds by the lengths N0, 4 N0, 16 N0).
    outcome : str
        One of :data:`OUTCOMES`.

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    if outcome == "failure":
        return np.asarray(values["failed"], dtype=bool)
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    return np.asarray(values["recognised_at"], dtype=bool)[:, 1 if outcome == "recognition at 4 N0" else 2]


def summary(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per language, initialisation and outcome: the seeds with the outcome under joint and lag, the seeds where
    only lag or only joint has the better outcome, lag's advantage, and McNemar's exact p (unadjusted;
    exploratory).

    Parameters
    ----------
    record : mapping
        :func:`run_pilot`'s record.

    Returns
    -------
    list of dict
        One row each.
    """
    found = []
    for language, by_initialisation in record["results"].items():
        for initialisation, schedules in by_initialisation.items():
            for outcome in OUTCOMES:
                joint, lag = (outcome_flags(schedules[s], outcome) for s in ("joint", "lag"))
                better, worse = (
                    ((joint & ~lag), (lag & ~joint)) if outcome == "failure" else ((lag & ~joint), (joint & ~lag))
                )
                b, c, n = int(better.sum()), int(worse.sum()), int(joint.size)
                found.append(
                    {
                        "language": language,
                        "initialisation": initialisation,
                        "outcome": outcome,
                        "joint": int(joint.sum()),
                        "lag": int(lag.sum()),
                        "lag_better": b,
                        "joint_better": c,
                        "n": n,
                        "advantage": (b - c) / n,
                        "p": mcnemar_exact(better.astype(int), worse.astype(int)).p_value,
                    }
                )
    return found


def write_record(output: Path) -> Path:
    """The pilot's command (``python -m lagtheory.experiments.run zero-readout [--output PATH]``): run it and
    write its record.

    Parameters
    ----------
    output : pathlib.Path
        The record to write (its folder exists).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    record = run_pilot(json.loads(TRANSFORMER_DESIGN.read_text(encoding="utf-8")))
    record["design_sha256"] = hashlib.sha256(TRANSFORMER_DESIGN.read_bytes()).hexdigest()
    output.write_text(json.dumps(record, sort_keys=True) + "\n", encoding="utf-8")
    return output
