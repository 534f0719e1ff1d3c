"""The engine: every schedule and every seed of a cell trained in one batched loop.

- :mod:`~lagtheory.experiments.engine.config`: the training configuration and the JSON form of a configuration;
- :mod:`~lagtheory.experiments.engine.device`: the device a cell trains on, checked, and a batch moved there;
- :mod:`~lagtheory.experiments.engine.cells`: the task protocol, and the
  batched runs of a cell or of rows of cells (:func:`~lagtheory.experiments.engine.cells.run_cell`,
  :func:`~lagtheory.experiments.engine.cells.run_rows`);
- :mod:`~lagtheory.experiments.engine.distributed`: units of work on a dask cluster, resumable, the same
  records as a serial run.
"""
