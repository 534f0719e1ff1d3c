"""The studies of the empirical chapters (:data:`STUDIES`: languages, regression, in-context regression,
and the standard small transformer), as data.

Each study is a :class:`lagtheory.experiments.exploratory.design.Study`: its tasks and settings, its cells
(the sweep of :mod:`lagtheory.experiments.exploratory.design`, calibrated by
:mod:`lagtheory.experiments.exploratory.calibration`, or its own fixed cells), its metric and margin. Its
runner is :mod:`lagtheory.experiments.exploratory.runner`; ``tests/test_design_records.py`` checks that each
study still builds the design of its committed record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ..parameters import fill_doc
from ..tasks.languages.catalogue import TASKS
from ..tasks.languages.task import LanguageRuns, LanguageSetting
from ..tasks.sequences.icl import ICLSetting, ICLTask
from ..tasks.sequences.regression import RegressionSetting, RegressionTask
from ..tasks.sequences.softmax_icl import SoftmaxICLSetting, SoftmaxICLTask
from ..tasks.transformer.languages import STUDY_LANGUAGES
from ..tasks.transformer.task import TRANSFORMER_TRAINING, TransformerLanguageRuns, TransformerSetting
from .design import COMPARED_SCHEDULES, Cell, Study, TaskDesign
from .records import (
    config_to_dict,
)

STAR_FREE = ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR", "CONTAINS_B_NOT_C", "FIRST_LEARNED")
"""The star-free language tasks of the study (the last two with distractors and learned positions)."""

LANGUAGE_SETTING = LanguageSetting(
    horizon_lengths=tuple(range(1, 41)) + tuple(int(n) for n in np.unique(np.round(np.geomspace(50, 1e12, 12))))
)
"""The language data of the study; the chapter's, with the exact check at every length 1..40 and at 12
lengths spaced evenly in log from 50 to 1e12."""
LANGUAGES = Study(
    name="languages",
    description="six star-free language tasks (four over {a, b}; eight letters; learned position scores)",
    tasks=tuple(
        TaskDesign(name, LANGUAGE_SETTING, steps=150, batch_size=32, description=TASKS[name].why) for name in STAR_FREE
    ),
    build=lambda name, setting: LanguageRuns(TASKS[name], setting),
    setting_types=dict.fromkeys(STAR_FREE, LanguageSetting),
)

REGRESSION_STUDY_SETTING = RegressionSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=128, test_seed=10**6
)
REGRESSION = Study(
    name="regression",
    description="single-location regression, trained on lengths 2..40, tested up to 1000",
    tasks=(
        TaskDesign(
            "regression", REGRESSION_STUDY_SETTING, steps=200, batch_size=32, description="single-location regression"
        ),
    ),
    build=lambda name, setting: RegressionTask(setting),
    setting_types={"regression": RegressionSetting},
)

ICL_STUDY_SETTING = ICLSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=200, test_seed=10**6
)
SOFTMAX_ICL_SETTING = SoftmaxICLSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=200, test_seed=10**6 + 1
)
ICL = Study(
    name="icl",
    description="in-context linear regression, linear and softmax attention, trained on contexts of 2..40",
    tasks=(
        TaskDesign("linear", ICL_STUDY_SETTING, steps=300, batch_size=32, description="linear self-attention, D = 5"),
        TaskDesign("softmax", SOFTMAX_ICL_SETTING, steps=300, batch_size=32, description="softmax attention, D = 3"),
    ),
    build=lambda name, setting: ICLTask(setting) if name == "linear" else SoftmaxICLTask(setting),
    setting_types={"linear": ICLSetting, "softmax": SoftmaxICLSetting},
)

TRANSFORMER_STUDY_LANGUAGES = (*STUDY_LANGUAGES, "LAST_B", "TWO_B", "PARITY")
"""The languages of the transformer study; the language study's star-free languages that
:class:`~lagtheory.experiments.tasks.transformer.task.TransformerLanguageRuns` supports (FIRST_LEARNED is FIRST
read through other features), the two new star-free languages LAST_B and TWO_B, and the non-star-free
control PARITY (:mod:`lagtheory.experiments.tasks.transformer.languages`)."""
TRANSFORMER_SCHEDULES = tuple(name for name in COMPARED_SCHEDULES if name != "one-step")
"""The schedules of the transformer study; joint, lag, lead, three-phase and the two-timescale schedules
of :data:`lagtheory.experiments.exploratory.design.COMPARED_SCHEDULES`."""


@fill_doc
def transformer_cells(design: TaskDesign, optimiser: str, base_rates: Mapping[str, float]) -> list[Cell]:
    """The one cell of a language of the transformer study: every schedule of :data:`TRANSFORMER_SCHEDULES`
    under :data:`~lagtheory.experiments.tasks.transformer.task.TRANSFORMER_TRAINING` (uncalibrated; attention
    initialised random, as this model needs) with the design's step budget T (warm-up T/4) and batch size;
    ``base_rates`` is not used (the study is not calibrated).

    Parameters
    ----------
    design : TaskDesign
        The language's task design.
    %(optimiser)s
    base_rates : mapping of str to float
        Not used.

    Returns
    -------
    list of Cell
        The one cell.
    """
    steps = design.steps
    training = dataclasses.replace(
        TRANSFORMER_TRAINING,
        steps=steps,
        warm_steps=max(1, round(steps / 4)),
        batch_size=design.batch_size,
        optimiser=optimiser,
    )
    name = f"{design.name}/{optimiser}/fixed/uncalibrated"
    return [
        Cell(name, design.name, optimiser, "fixed", "uncalibrated", TRANSFORMER_SCHEDULES, design.setting, training)
    ]


TRANSFORMER = Study(
    name="transformer",
    description=(
        "the standard small transformer (1 layer, 2 heads, width 16, learned positions) on five star-free "
        "languages of the language study, two new star-free languages and the parity control, trained on "
        "lengths 1..16 and tested at 16, 64 and 256"
    ),
    tasks=tuple(
        TaskDesign(name, TransformerSetting(), steps=300, batch_size=32, description=f"the language {name}")
        for name in TRANSFORMER_STUDY_LANGUAGES
    ),
    build=lambda name, setting: TransformerLanguageRuns(name, setting),
    setting_types=dict.fromkeys(TRANSFORMER_STUDY_LANGUAGES, TransformerSetting),
    optimisers=("adam",),
    cells=transformer_cells,
    calibrated=False,
    constants={
        "schedules": list(TRANSFORMER_SCHEDULES),
        "training": config_to_dict(TRANSFORMER_TRAINING),
        "languages": list(TRANSFORMER_STUDY_LANGUAGES),
    },
    metric=(
        "recognised: the run classifies every random and hard test word of every test length above N0 right "
        "(a sampled check, lagtheory.experiments.tasks.transformer.task); higher is better"
    ),
    primary="recognised",
    higher_is_better=True,
    binary=True,
    margin=0.1,
    margin_rule=(
        "0.1: recognition rates within 0.1 of joint's either way are too close to matter; fixed before any run of "
        "this study"
    ),
)

TRANSFORMER_SINUSOIDAL = dataclasses.replace(
    TRANSFORMER,
    name="transformer_sinusoidal",
    description=TRANSFORMER.description.replace("learned positions", "sinusoidal positions"),
    tasks=tuple(
        dataclasses.replace(design, setting=dataclasses.replace(design.setting, positions="sinusoidal"))
        for design in TRANSFORMER.tasks
    ),
)
"""The transformer study with the positions factor at its other level, fixed sinusoidal positions
(:func:`~lagtheory.experiments.tasks.transformer.model.sinusoidal_positions`) defined at every length, in
place of a learned table whose rows beyond N0 no training word reaches; everything else as in the study
``TRANSFORMER`` ("transformer")."""

STUDIES: Mapping[str, Study] = {
    study.name: study for study in (LANGUAGES, REGRESSION, ICL, TRANSFORMER, TRANSFORMER_SINUSOIDAL)
}
"""The studies by name (languages, regression, in-context regression, the transformer with learned and with
sinusoidal positions)."""


def study(name: str) -> Study:
    """The study called ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`STUDIES`.

    Returns
    -------
    Study
        The study.

    Raises
    ------
    ValueError
        If ``name`` is not a study.
    """
    if name not in STUDIES:
        raise ValueError(f"name must be one of {tuple(STUDIES)}, got {name!r}")
    return STUDIES[name]
