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
the studies and their per-seed records (:mod:`~lagtheory.experiments.studies`,
:mod:`~lagtheory.experiments.records`, the command
:mod:`~lagtheory.experiments.run`) and the paired statistics
(:mod:`~lagtheory.experiments.paired`)."""
