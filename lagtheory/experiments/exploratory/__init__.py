"""The exploratory studies of the empirical chapters and their analysis.

- :mod:`~lagtheory.experiments.exploratory.design`: the design, constants and cells;
- :mod:`~lagtheory.experiments.exploratory.calibration`: the base step sizes;
- :mod:`~lagtheory.experiments.exploratory.studies`: the studies and their runner;
- :mod:`~lagtheory.experiments.exploratory.records`: the per-seed records;
- :mod:`~lagtheory.experiments.exploratory.regimes`: their statistics (families, regime maps, tables);
- :mod:`~lagtheory.experiments.exploratory.figures`: their figures;
- :mod:`~lagtheory.experiments.exploratory.reanalysis`: the re-analysis by decomposed outcome.
"""
