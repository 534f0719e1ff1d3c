"""The frozen predictor applied to the standard transformer's validation cells, before any of them runs.

The registration (``book/registration.md``, section *The predictor*) names the standard transformer
(the exploratory study of the transformer chapter) as a held-out setting: its validation cells are every language of the transformer study
(:data:`lagtheory.experiments.exploratory.studies.TRANSFORMER_STUDY_LANGUAGES`, the two new star-free languages
and the control PARITY included) at the main grid's readout scales and step-size ratios
(:data:`lagtheory.experiments.exploratory.design.READOUT_SCALES` x :data:`~lagtheory.experiments.exploratory.design.RATIOS`),
with both optimisers, and "the frozen function is applied, and its values committed, before their
first run". :func:`predictions` applies
:func:`lagtheory.experiments.predictor.balance.first_step_balance` (frozen: definition, seeds, threshold) and the
frozen design-only baseline (its coefficients as stored in
:data:`lagtheory.experiments.paths.PREDICTOR_EXPLORATORY`) to each cell; ``python -m
lagtheory.experiments.run predictor-transformer`` (or its alias ``python -m lagtheory.experiments.predictor.transformer``,
which the registration page quotes) writes them to :data:`~lagtheory.experiments.paths.PREDICTOR_TRANSFORMER`.

Each cell's configuration is the transformer study's regime
(:data:`lagtheory.experiments.tasks.transformer.task.TRANSFORMER_TRAINING`: random initialisation of every
parameter, batch 32) with the cell's optimiser, readout scale and ratio: attention step
``eta sqrt(r)``, output step ``eta / sqrt(r)``. The base rate ``eta`` scales both steps alike and
cancels from the balance, so it is 1 here; the runs use the rate of the registered calibration rule.
Nothing here has been run on these cells: the transformer's only earlier runs are the exploratory
pilot (``benchmarks/transformer_pilot_*.md``: Adam at one step size 0.01, readout scale 0.5, ratio 1,
seeds 100-105), a configuration that is not among the validation cells.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

from lagtheory.training import OPTIMISERS

from ..exploratory.design import RATIOS, READOUT_SCALES
from ..exploratory.studies import TRANSFORMER
from ..paths import PREDICTOR_EXPLORATORY, PREDICTOR_TRANSFORMER
from ..tasks.transformer.task import TRANSFORMER_TRAINING
from .balance import THRESHOLD, first_step_balance
from .evaluation import prediction_row

"""Where the predictions for the transformer's validation cells are committed."""


def predictions(coefficients: Sequence[float]) -> list[dict[str, Any]]:
    """For every validation cell of the transformer (module docstring): the first-step balance, its
    prediction (``balance >= THRESHOLD``: "lag helps") and the baseline's log-odds with the frozen
    ``coefficients`` (intercept, log10 ratio, log10 readout scale).

    Parameters
    ----------
    coefficients : sequence of float
        The baseline's three frozen coefficients.

    Returns
    -------
    list of dict
        One row per cell (:func:`~lagtheory.experiments.predictor.evaluation.prediction_row`).

    Raises
    ------
    ValueError
        If ``coefficients`` does not hold three values.
    """
    if len(coefficients) != 3:
        raise ValueError(f"coefficients must be (intercept, ratio, scale), got {len(coefficients)} values")
    rows = []
    for design in TRANSFORMER.tasks:
        task = TRANSFORMER.build(design.name, design.setting)
        for optimiser in OPTIMISERS:
            for scale in READOUT_SCALES:
                for ratio in RATIOS:
                    training = dataclasses.replace(
                        TRANSFORMER_TRAINING,
                        optimiser=optimiser,
                        output_scale=scale,
                        attention_lr=math.sqrt(ratio),
                        output_lr=1 / math.sqrt(ratio),
                    )
                    balance = first_step_balance(task, training)
                    rows.append(
                        prediction_row(TRANSFORMER.name, design.name, optimiser, scale, ratio, balance, coefficients)
                    )
    return rows


def main() -> None:
    """Compute the predictions with the stored baseline coefficients and write :data:`~lagtheory.experiments.paths.PREDICTOR_TRANSFORMER`."""
    coefficients = json.loads(PREDICTOR_EXPLORATORY.read_text())["summary"]["baseline_coefficients"]
    rows = predictions(coefficients)
    PREDICTOR_TRANSFORMER.write_text(
        json.dumps({"threshold": THRESHOLD, "cells": rows}, indent=1, sort_keys=True) + "\n"
    )
    helps = sum(row["predicts_lag_helps"] for row in rows)
    print(
        f"{helps} of {len(rows)} transformer validation cells predicted 'lag helps'; written to {PREDICTOR_TRANSFORMER}"
    )


if __name__ == "__main__":  # the command the registration page quotes: an alias of the one command
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.predictor.transformer")
