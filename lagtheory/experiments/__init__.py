"""Experiments of the empirical chapters, one subpackage per job:

- :mod:`~lagtheory.experiments.engine`: the batched training of a cell, every schedule and seed at once
  (:mod:`~lagtheory.experiments.engine.cells`), and units of work on a dask cluster
  (:mod:`~lagtheory.experiments.engine.distributed`);
- :mod:`~lagtheory.experiments.statistics`: paired statistics (:mod:`~lagtheory.experiments.statistics.paired`)
  and power (:mod:`~lagtheory.experiments.statistics.power`);
- :mod:`~lagtheory.experiments.tasks`: the tasks, languages on the one-layer model
  (:mod:`~lagtheory.experiments.tasks.languages`), regression and in-context regression
  (:mod:`~lagtheory.experiments.tasks.sequences`), languages on a standard small transformer
  (:mod:`~lagtheory.experiments.tasks.transformer`);
- :mod:`~lagtheory.experiments.exploratory`: the exploratory studies, their records and analysis;
- :mod:`~lagtheory.experiments.predictor`: the registered predictor of where lag helps and its evaluation;
- :mod:`~lagtheory.experiments.confirmatory`: the registered confirmatory study;
- :mod:`~lagtheory.experiments.run`: the one command that runs every study, stage and analysis;
- :mod:`~lagtheory.experiments.subcommands`: its subcommands beyond the exploratory and confirmatory studies;
- :mod:`~lagtheory.experiments.paths`: where the experiments read and write;
- :mod:`~lagtheory.experiments.parameters`: the parameter documentation their functions share, written once.
"""
