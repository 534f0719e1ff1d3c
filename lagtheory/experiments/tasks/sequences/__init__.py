"""The real-valued sequence tasks.

- :mod:`~lagtheory.experiments.tasks.sequences.driver`: the shared driver of the two;
- :mod:`~lagtheory.experiments.tasks.sequences.regression`: single-location regression;
- :mod:`~lagtheory.experiments.tasks.sequences.icl`: in-context linear regression, linear attention;
- :mod:`~lagtheory.experiments.tasks.sequences.softmax_icl`: the same read by softmax attention.
"""
