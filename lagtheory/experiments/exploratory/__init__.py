"""The exploratory studies of the empirical chapters and their analysis.

- :mod:`~lagtheory.experiments.exploratory.design`: the design, constants and cells;
- :mod:`~lagtheory.experiments.exploratory.calibration`: the base step sizes;
- :mod:`~lagtheory.experiments.exploratory.studies`: the studies, as data;
- :mod:`~lagtheory.experiments.exploratory.runner`: their runner (units, records, seeded re-runs);
- :mod:`~lagtheory.experiments.exploratory.records`: the per-seed records;
- :mod:`~lagtheory.experiments.exploratory.regimes`: their statistics (families, regime maps, tables);
- :mod:`~lagtheory.experiments.exploratory.figures`: their figures;
- :mod:`~lagtheory.experiments.exploratory.outcomes`: the decomposed outcomes of a record (failure, the loss
  when both succeed) and their verdicts;
- :mod:`~lagtheory.experiments.exploratory.reanalysis`: issue 20's re-analysis, recomputed from them.
"""
