"""The language tasks of the one-layer model.

- :mod:`~lagtheory.experiments.tasks.languages.catalogue`: which language, through which features;
- :mod:`~lagtheory.experiments.tasks.languages.features`: the input features;
- :mod:`~lagtheory.experiments.tasks.languages.sampling`: uniform words of a regular language;
- :mod:`~lagtheory.experiments.tasks.languages.worst_case`: the exact verifier on every word of a length;
- :mod:`~lagtheory.experiments.tasks.languages.task`: the language experiment as an engine task.
"""
