"""The tasks the engine trains, one subpackage per family.

- :mod:`~lagtheory.experiments.tasks.languages`: star-free languages on the one-layer model;
- :mod:`~lagtheory.experiments.tasks.sequences`: single-location regression and in-context regression;
- :mod:`~lagtheory.experiments.tasks.transformer`: languages on a standard small transformer.
"""
