"""Experiments of the empirical chapters: the engine that trains every schedule
and seed of a cell at once (:mod:`lagtheory.experiments.engine`), the tasks
(languages: :mod:`~lagtheory.experiments.language_catalogue`,
:mod:`~lagtheory.experiments.word_sampling`,
:mod:`~lagtheory.experiments.language_features`,
:mod:`~lagtheory.experiments.worst_case`,
:mod:`~lagtheory.experiments.language_runs`; regression and in-context
regression on the shared driver :mod:`~lagtheory.experiments.sequence_tasks`; the standard small
transformer: :mod:`~lagtheory.experiments.transformer_model`,
:mod:`~lagtheory.experiments.transformer_languages`,
:mod:`~lagtheory.experiments.transformer_runs`),
the study layer by job (the design, constants and cells:
:mod:`~lagtheory.experiments.design`; the base rates: :mod:`~lagtheory.experiments.calibration`;
the studies and their runner: :mod:`~lagtheory.experiments.studies`; the per-seed records:
:mod:`~lagtheory.experiments.records`; their statistics and figures:
:mod:`~lagtheory.experiments.regimes`, :mod:`~lagtheory.experiments.regime_figures`; units on a
dask cluster: :mod:`~lagtheory.experiments.distributed`; the command:
:mod:`~lagtheory.experiments.run`) and the paired statistics
(:mod:`~lagtheory.experiments.paired`)."""
