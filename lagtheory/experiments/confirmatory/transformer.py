"""The registered transformer study's names and command as its registered section (``book/registration.md``, its
transformer section) quotes them: ``lagtheory.experiments.confirmatory.transformer.derive_design`` and::

    python -m lagtheory.experiments.confirmatory.transformer design|run|analyse [--workers N] [--output PATH]

Registered text is never edited, so this module keeps both true as an alias: it holds no code of the study, and
its command runs ``python -m lagtheory.experiments.run transformer-registered --part design|run|analyse`` with the
same options (:func:`lagtheory.experiments.run.alias`). The
study is four modules, by job: its design (:mod:`~lagtheory.experiments.confirmatory.transformer_design`, with
the rows it reads, :mod:`~lagtheory.experiments.confirmatory.transformer_rows`), its registered text
(:mod:`~lagtheory.experiments.confirmatory.transformer_text`), its runs
(:mod:`~lagtheory.experiments.confirmatory.transformer_runs`) and its analysis
(:mod:`~lagtheory.experiments.confirmatory.transformer_analysis`); their public names are importable from here too.

``design`` writes the design from the pilot's records (default ``runs/transformer_study/design.json``,
:func:`~lagtheory.experiments.confirmatory.transformer_design.write_design`), ``run`` the study's record
(``runs/transformer_study/study.json.gz``, :func:`~lagtheory.experiments.confirmatory.transformer_runs.run_registered`;
refuses to start when the registered section does not hash to its stored value or the design file is not the
registered one), ``analyse`` the analysis
(:func:`~lagtheory.experiments.confirmatory.transformer_analysis.analyse_record`).
"""

from __future__ import annotations

from .transformer_analysis import analyse, analyse_record
from .transformer_design import (
    ALPHA,
    COMPUTE_DTYPE,
    CONTROL,
    DESIGN_HASH_PATTERN,
    FIRST_SEED,
    GATE_SHARE,
    GRID,
    MARGIN,
    MAX_SEEDS,
    SEARCH_LIMIT,
    TARGET_POWER,
    TEST_SEED,
    WINDOW_SHARE,
    derive_design,
    design_hash,
    design_text,
    equivalence_power,
    gate,
    load_design,
    planning,
    registered_design_hash,
    tuned,
    write_design,
)
from .transformer_rows import (
    OUTCOMES,
    PILOT_FOLDER,
    VARIANTS,
    criterion,
    lag_key,
    load_pilot,
    outcome_flags,
    pilot_rows,
    recognised_at,
    variant_rows,
    warm_fraction,
)
from .transformer_runs import (
    FORMAT,
    OUTPUT_FOLDER,
    STUDY_FOLDER,
    check_registered,
    run_registered,
    study_rows,
    study_units,
)
from .transformer_text import registered_text

if __name__ == "__main__":  # the command the registered section quotes: an alias of the one command
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.confirmatory.transformer")
