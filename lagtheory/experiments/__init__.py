"""Experiments of the empirical chapters: the shared training protocol
(:mod:`lagtheory.experiments.protocol`) and the tasks of each chapter."""
