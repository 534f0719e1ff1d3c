"""The registered predictor of where lag helps.

- :mod:`~lagtheory.experiments.predictor.balance`: the frozen first-step balance;
- :mod:`~lagtheory.experiments.predictor.evaluation`: its evaluation on the exploratory records;
- :mod:`~lagtheory.experiments.predictor.transformer`: its predictions for the standard transformer.
"""
