"""One list of metrics per task family, and every metric a task evaluates is stored: each study's tasks' ``evaluate``
(run on a seed's untrained parameters) returns exactly its family's list (LANGUAGE_METRICS, SEQUENCE_METRICS,
TRANSFORMER_METRICS), and a record's cell (entries.cell_values) stores every one of them (test_loss as itself,
zero_loss through the primary metric). A metric added to ``evaluate`` but to no list fails here, named."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lagtheory.experiments.engine.cells import standard_draws
from lagtheory.experiments.exploratory.design import PRIMARY
from lagtheory.experiments.exploratory.entries import cell_values
from lagtheory.experiments.exploratory.studies import STUDIES
from lagtheory.experiments.tasks.languages.task import LANGUAGE_METRICS, LanguageRuns
from lagtheory.experiments.tasks.sequences.driver import SEQUENCE_METRICS, SequenceRegression
from lagtheory.experiments.tasks.transformer.task import TRANSFORMER_METRICS, TransformerLanguageRuns

FAMILIES = (
    (LanguageRuns, LANGUAGE_METRICS),
    (SequenceRegression, SEQUENCE_METRICS),
    (TransformerLanguageRuns, TRANSFORMER_METRICS),
)


def listed(task: object) -> tuple[str, ...]:
    """The metric list of ``task``'s family."""
    return next(metrics for kind, metrics in FAMILIES if isinstance(task, kind))


def unlisted(evaluated: set[str], metrics: tuple[str, ...]) -> list[str]:
    """The metrics evaluated that the family's list does not name (so no record would store them)."""
    return sorted(evaluated - set(metrics))


def not_stored(metrics: tuple[str, ...], study_name: str) -> list[str]:
    """The metrics of a list that a record's detailed cell does not store (test_loss stored as itself, zero_loss
    read into the primary metric)."""
    shape = (1, 2)
    result = SimpleNamespace(
        metrics={name: np.full(shape, 0.5) for name in metrics},
        traces={"attention_moved": np.zeros((*shape, 3)), "output_moved": np.zeros((*shape, 3))},
        losses=np.zeros((*shape, 3)),
        final={},
    )
    stored = cell_values(result, SimpleNamespace(sweep="attention_init", level="zero"))
    assert PRIMARY in stored, study_name
    return sorted(set(metrics) - set(stored) - {"zero_loss"})


@pytest.mark.parametrize("study_name", sorted(STUDIES))
def test_every_metric_a_task_evaluates_is_listed_and_stored(study_name):
    the_study = STUDIES[study_name]
    seen = set()
    for design in the_study.tasks:
        task = the_study.build(design.name, design.setting)
        if type(task) in seen:
            continue
        seen.add(type(task))
        metrics = task.evaluate({k: 0.5 * v[None] for k, v in standard_draws(task, [0, 1]).items()})
        family = listed(task)
        assert not unlisted(set(metrics), family), (
            f"{study_name}/{design.name}: {type(task).__name__}.evaluate returns {unlisted(set(metrics), family)}, "
            "which its family's metric list does not name, so no record stores it"
        )
        assert set(family) <= set(metrics), f"the list names metrics the task does not evaluate: {study_name}"
        assert not not_stored(family, study_name)


def test_a_planted_metric_is_named():
    assert unlisted({*LANGUAGE_METRICS, "new_metric"}, LANGUAGE_METRICS) == ["new_metric"]
    assert not_stored((*TRANSFORMER_METRICS, "new_metric"), "planted") == ["new_metric"]  # in no list: not stored
    assert not_stored(SEQUENCE_METRICS, "planted") == []
