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
- :mod:`~lagtheory.experiments.exploratory.reanalysis`: issue 20's re-analysis, recomputed from them;
- :mod:`~lagtheory.experiments.exploratory.transformer_pilot`: the standard transformer's pilot (configuration,
  tuning, diagnostics), which the registered transformer study was derived from;
- :mod:`~lagtheory.experiments.exploratory.lag_timing`: the lag itself, measured in joint training (when the
  readout and the attention each make half their progress), on the one-layer model and the transformer;
- :mod:`~lagtheory.experiments.exploratory.zero_readout`: the registered transformer with its readout (and MLP)
  initialised at zero, joint against lag (a pilot).
"""
