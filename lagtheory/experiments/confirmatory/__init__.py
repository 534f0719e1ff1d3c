"""The registered confirmatory study (``book/registration.md``).

- :mod:`~lagtheory.experiments.confirmatory.registration`: the registered section's hash and constants;
- :mod:`~lagtheory.experiments.confirmatory.design`: its cells and the runs of each stage;
- :mod:`~lagtheory.experiments.confirmatory.runs`: the stages, run resumably on dask;
- :mod:`~lagtheory.experiments.confirmatory.analysis`: the registered outcomes and verdicts;
- :mod:`~lagtheory.experiments.confirmatory.predictor`: H5, the frozen predictor on the validation cells;
- :mod:`~lagtheory.experiments.confirmatory.records`: the committed records and their re-run sample.
"""
