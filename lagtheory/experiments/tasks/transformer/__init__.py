"""Languages on a standard small transformer.

- :mod:`~lagtheory.experiments.tasks.transformer.model`: the model, batched over seeds;
- :mod:`~lagtheory.experiments.tasks.transformer.languages`: its languages and test words;
- :mod:`~lagtheory.experiments.tasks.transformer.task`: the model on a language as an engine task;
- :mod:`~lagtheory.experiments.tasks.transformer.units`: the unit of work of the pilot and the registered study.
"""
