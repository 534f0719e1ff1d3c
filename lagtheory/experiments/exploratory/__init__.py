"""The exploratory studies of the empirical chapters and their analysis.

- :mod:`~lagtheory.experiments.exploratory.design`: the design, constants and cells;
- :mod:`~lagtheory.experiments.exploratory.calibration`: the base step sizes;
- :mod:`~lagtheory.experiments.exploratory.studies`: the studies, as data;
- :mod:`~lagtheory.experiments.exploratory.runner`: their runner (units, records, seeded re-runs);
- :mod:`~lagtheory.experiments.exploratory.records`: the per-seed records (their format, reading and checks);
- :mod:`~lagtheory.experiments.exploratory.entries`: a study's record written from its runs;
- :mod:`~lagtheory.experiments.exploratory.regimes`: their statistics (families, regime maps, tables);
- :mod:`~lagtheory.experiments.exploratory.figures`: their figures;
- :mod:`~lagtheory.experiments.exploratory.outcomes`: the decomposed outcomes of a record (failure, the loss
  when both succeed) and their verdicts;
- :mod:`~lagtheory.experiments.exploratory.reanalysis`: the independent re-analysis behind the registration, recomputed from them;
- :mod:`~lagtheory.experiments.exploratory.transformer_pilot`: the standard transformer's pilot (configuration,
  tuning, diagnostics), which the registered transformer study was derived from;
- :mod:`~lagtheory.experiments.exploratory.lag_timing`: the lag itself, measured in joint training (when the
  readout and the attention each make half their progress), on the one-layer model and the transformer;
- :mod:`~lagtheory.experiments.exploratory.functional_timing`: when each parameter group learns, measured by what
  the model computes (knockout and path attribution, scored by the raw, calibrated and 0-1 losses);
- :mod:`~lagtheory.experiments.exploratory.transformer_groups`: which parameter group of the standard transformer
  carries the decision (knockout totals and half-times, two groupings, two step sizes);
- :mod:`~lagtheory.experiments.exploratory.zero_readout`: the registered transformer with its readout (and MLP)
  initialised at zero, joint against lag (a pilot).
"""
