"""Paired statistics and power: generic tests of two schedules seed by seed.

- :mod:`~lagtheory.experiments.statistics.paired`: paired t-tests, McNemar, TOST, Holm, bootstrap intervals;
- :mod:`~lagtheory.experiments.statistics.power`: the power of those tests and the seeds they call for.
"""
