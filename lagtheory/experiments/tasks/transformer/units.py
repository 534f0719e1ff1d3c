"""The unit of work of the transformer's studies, shared by the exploratory pilot
(:mod:`lagtheory.experiments.exploratory.transformer_pilot`) and the registered transformer study
(:mod:`lagtheory.experiments.confirmatory.transformer_runs`): a unit is the rows (schedule, training) of one
language and setting on a chunk of seeds (:func:`unit_payload`), trained in one batched engine call and stored per
row and seed (:func:`run_unit`); :func:`training_at` is a row's training at one step size and warm-up.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...engine.cells import check_seeds, run_rows
from ...engine.config import TrainingConfig, config_from_dict, config_to_dict
from ...parameters import fill_doc
from .task import TRANSFORMER_TRAINING, TransformerLanguageRuns, TransformerSetting, row_outcomes

PILOT_TRAINING = dataclasses.replace(TRANSFORMER_TRAINING, big_step=0.75, output_scale=1.0, attention_scale=1.0)
"""The first configuration's training (Adam at 0.01, T = 300, batches of 32) with every draw at scale 1, which
with the standard initialisation makes the weight matrices LeCun-normal, the embeddings N(0, 1) and the biases
0 (and three-phase's attention step 0.75)."""


def training_at(rate: float, warm_fraction: float = 0.25, base: TrainingConfig = PILOT_TRAINING) -> TrainingConfig:
    """``base`` at step size ``rate`` for both groups, lag's warm-up ``round(T * warm_fraction)`` steps.

    Parameters
    ----------
    rate : float
        The step size of both groups, > 0.
    warm_fraction : float, optional
        Lag's warm-up as a fraction of the budget, in (0, 1).
    base : TrainingConfig, optional
        The rest of the configuration.

    Returns
    -------
    TrainingConfig
        The configuration.
    """
    warm = max(1, round(base.steps * warm_fraction))
    return dataclasses.replace(base, attention_lr=rate, output_lr=rate, warm_steps=warm, big_step=rate * warm)


@fill_doc
def unit_payload(
    language: str, setting: TransformerSetting, rows: Sequence[tuple[str, TrainingConfig]], seeds: Sequence[int]
) -> dict[str, Any]:
    """A unit: the rows (schedule, training) of one language and setting, trained together on ``seeds``.

    Parameters
    ----------
    language : str
        A transformer language.
    setting : TransformerSetting
        The data, tests and architecture.
    rows : sequence of (str, TrainingConfig)
        The rows, sharing the optimiser and batch size.
    %(seeds)s

    Returns
    -------
    dict
        JSON-ready.
    """
    return {
        "language": language,
        "setting": config_to_dict(setting),
        "rows": [{"schedule": schedule, "training": config_to_dict(config)} for schedule, config in rows],
        "seeds": list(check_seeds(seeds)),
    }


def _stored(values: Any) -> Any:
    """Per-seed values (nested) as JSON-ready numbers: booleans kept, non-finite floats as None."""
    if np.ndim(values) > 0:
        return [_stored(value) for value in values]
    if isinstance(values, (bool, np.bool_)):
        return bool(values)
    return float(values) if np.isfinite(values) else None


def run_unit(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Train a unit's rows (:func:`unit_payload`) in one batched engine call and return, per row, its
    schedule, training and per-seed outcomes (:func:`~lagtheory.experiments.tasks.transformer.task.row_outcomes`),
    with ``seconds`` of wall time and ``cpu_seconds`` of this process's CPU time.

    Parameters
    ----------
    payload : mapping
        :func:`unit_payload`'s output.

    Returns
    -------
    dict
        ``rows``, ``seconds``, ``cpu_seconds``.
    """
    start, cpu = time.perf_counter(), time.process_time()
    setting = config_from_dict(TransformerSetting, payload["setting"])
    task = TransformerLanguageRuns(payload["language"], setting)
    rows = [(row["schedule"], config_from_dict(TrainingConfig, row["training"])) for row in payload["rows"]]
    result = run_rows(task, rows, payload["seeds"])
    outcomes = row_outcomes(result.metrics, result.losses)
    stored = []
    for k, row in enumerate(payload["rows"]):
        values = {name: _stored(value[k]) for name, value in outcomes.items()}
        stored.append({**row, "values": values})
    return {"rows": stored, "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}
