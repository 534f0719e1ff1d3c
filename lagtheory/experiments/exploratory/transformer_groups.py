"""EXPLORATORY: which parameter group of the standard transformer carries the decision, and when it learns it.

The registered transformer study's compared languages, in its configuration (the frozen design), trained jointly
at the study's tuned step size and at one slower rate (a tenth of it, :func:`rates_of`), on seeds of their own
(:data:`SEEDS`). Each run's snapshots are timed by knockout
(:func:`lagtheory.experiments.exploratory.functional_timing.knockout_scores`) under two groupings
(:func:`groupings`): ``with embeddings`` (the engine's, the token and position embeddings with the attention)
and ``embeddings apart`` (embeddings, attention, output: readout and MLP). Per group and score the record keeps
the **knockout total** S_G(0) - S_G(T), how much worse the final model gets with that group reset to its initial
value (0 or less: the final model does not need what the group learnt), and the group's knockout half-time,
from the knockout every :data:`STRIDE` steps.
The models are scored on :data:`EVALUATION_WORDS` words drawn as the training words are, from
:data:`~lagtheory.experiments.exploratory.functional_timing.EVALUATION_SEED`.

The command ``python -m lagtheory.experiments.run transformer-groups [--output PATH]`` writes the record
(default ``runs/transformer_groups.json``; the committed copy is ``book/data/transformer_groups.json``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..engine.cells import TrainingConfig
from ..parameters import fill_doc
from ..paths import TRANSFORMER_DESIGN
from ..tasks.transformer.model import batched_outputs
from ..tasks.transformer.task import TransformerLanguageRuns, TransformerSetting
from . import functional_timing as F
from .records import config_from_dict, config_to_dict, versions
from .transformer_pilot import training_at

SEEDS: tuple[int, ...] = tuple(range(720_000, 720_008))
"""The seeds of this measurement (8), used by no other run."""
EVALUATION_WORDS = 256
"""Evaluation words of the transformer."""
STRIDE = 10
"""The knockout is evaluated every STRIDE steps (and at the last, T being a multiple of it); half-times to
within STRIDE steps; the totals are exact."""
CHUNK = 16
"""Snapshots evaluated in one batched call (bounds the memory of the activations)."""
EMBEDDINGS = ("tokens", "positions", "previous")
"""The names of the embedding parameters (those the model has)."""


def groupings(task: TransformerLanguageRuns) -> dict[str, dict[str, tuple[str, ...]]]:
    """The two groupings of the module docstring, by name.

    Parameters
    ----------
    task : TransformerLanguageRuns
        The task (its parameters and the engine's groups).

    Returns
    -------
    dict
        Grouping name -> group -> parameter names.
    """
    engine = F.engine_grouping(task)
    names = [name for members in engine.values() for name in members]
    embeddings = tuple(name for name in names if name in EMBEDDINGS)
    attention = tuple(name for name in engine["attention"] if name not in embeddings)
    rest = tuple(name for name in names if name not in embeddings and name not in attention)
    return {
        "with embeddings": engine,
        "embeddings apart": {"embeddings": embeddings, "attention": attention, "output": rest},
    }


def transformer_margins(task: TransformerLanguageRuns) -> F.Margins:
    """The margins y f of the transformer on :data:`EVALUATION_WORDS` words drawn as the training words are.

    Parameters
    ----------
    task : TransformerLanguageRuns
        The task scored (its model, arithmetic and word sampler).

    Returns
    -------
    callable
        Parameters (seeds, times, ...) -> margins (seeds, times, words), :data:`CHUNK` snapshots at a time.
    """
    tokens, keep, labels = task.training_stream([F.EVALUATION_SEED], 1, EVALUATION_WORDS).batch(0)
    tokens, keep, labels = tokens[0], keep[0], labels[0]

    def margins_of(params: Mapping[str, torch.Tensor]) -> torch.Tensor:
        times = next(iter(params.values())).shape[1]
        found = []
        for start in range(0, times, CHUNK):
            chunk = {name: value[:, start : start + CHUNK].transpose(0, 1) for name, value in params.items()}
            found.append(batched_outputs(task.model, chunk, tokens, keep, task.dtype).transpose(0, 1))
        return labels * torch.cat(found, dim=1).to(torch.float64)

    return margins_of


@fill_doc
def rates_of(design: Mapping[str, Any], language: str) -> tuple[float, float]:
    """The registered study's tuned joint step size of ``language`` and a tenth of it.

    Parameters
    ----------
    design : mapping
        The registered transformer study's design (its tuned rates).
    %(language)s

    Returns
    -------
    tuple of float
        (tuned, slower).
    """
    rate = design["choices"][language]["joint"]["rate"]
    return rate, rate / 10


@fill_doc
def measure(design: Mapping[str, Any], seeds: Sequence[int]) -> dict[str, Any]:
    """Every compared language at both rates: knockout totals and half-times under both groupings.

    Parameters
    ----------
    design : mapping
        The registered transformer study's design.
    %(seeds)s

    Returns
    -------
    dict
        Language -> rate (as text) -> ``training``, ``seconds``, and per grouping, score and group the per-seed
        ``total`` and ``half`` (None: undefined), and ``final`` per score.
    """
    setting = config_from_dict(TransformerSetting, design["setting"])
    base = config_from_dict(TrainingConfig, design["training"])
    found: dict[str, Any] = {}
    for language in design["compared"]:
        task = TransformerLanguageRuns(language, setting)
        margins_of = transformer_margins(task)
        for rate in rates_of(design, language):
            start = time.perf_counter()
            config = training_at(rate, base=base)
            if config.steps % STRIDE:
                raise ValueError(f"the budget {config.steps} is not a multiple of STRIDE = {STRIDE}")
            snapshots = {name: value[:, ::STRIDE] for name, value in F.snapshots_of(task, config, seeds).items()}
            entry: dict[str, Any] = {"training": config_to_dict(config)}
            for name, grouping in groupings(task).items():
                knocked = F.knockout_scores(snapshots, grouping, margins_of)
                entry[name] = {"groups": {group: list(members) for group, members in grouping.items()}}
                for score in F.SCORES:
                    half = F.half_time(F.knockout_progress(knocked[score]))
                    entry[name][score] = {
                        group: {
                            "total": [float(v) for v in knocked[score][g, :, 0] - knocked[score][g, :, -1]],
                            "half": [None if np.isnan(v) else int(v) * STRIDE for v in half[g]],
                        }
                        for g, group in enumerate(grouping)
                    }
                    entry["final"] = entry.get("final", {}) | {score: [float(v) for v in knocked[score][0, :, -1]]}
            entry["seconds"] = time.perf_counter() - start
            found.setdefault(language, {})[f"{rate:g}"] = entry
            print(f"{language} at {rate:g}: {entry['seconds']:.1f} s", file=sys.stderr)
    return found


def write_record(output: Path, seeds: int | None = None) -> Path:
    """Measure (module docstring) and write the record (``python -m lagtheory.experiments.run transformer-groups
    [--seeds N] [--output PATH]``).

    Parameters
    ----------
    output : pathlib.Path
        The record to write (its folder exists).
    seeds : int, optional
        The first N seeds of :data:`SEEDS` only (a trial; default all).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    torch.set_num_threads(1)
    design = json.loads(TRANSFORMER_DESIGN.read_text(encoding="utf-8"))
    chosen = SEEDS[: len(SEEDS) if seeds is None else seeds]
    wall, cpu = time.perf_counter(), time.process_time()
    record = {
        "format": "lagtheory-transformer-groups-1",
        "exploratory": True,
        "seeds": list(chosen),
        "evaluation": {"seed": F.EVALUATION_SEED, "words": EVALUATION_WORDS, "stride": STRIDE},
        "versions": versions(),
        "languages": measure(design, chosen),
    }
    record["seconds"], record["cpu_seconds"] = time.perf_counter() - wall, time.process_time() - cpu
    output.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n")
    return output
