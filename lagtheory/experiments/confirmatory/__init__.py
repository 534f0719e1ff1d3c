"""The registered studies (``book/registration.md``).

- :mod:`~lagtheory.experiments.confirmatory.registration`: the registered sections' hashes and constants;
- :mod:`~lagtheory.experiments.confirmatory.design`: its cells and the runs of each stage;
- :mod:`~lagtheory.experiments.confirmatory.planning`: its power calculation (planning effects, seeds per cell);
- :mod:`~lagtheory.experiments.confirmatory.stages`: what each stage runs, and its record;
- :mod:`~lagtheory.experiments.confirmatory.runs`: the units of the stages and their work;
- :mod:`~lagtheory.experiments.confirmatory.tuning`: best-vs-best tuning (the configuration each schedule is
  chosen at);
- :mod:`~lagtheory.experiments.confirmatory.analysis`: the registered outcomes and verdicts;
- :mod:`~lagtheory.experiments.confirmatory.predictor`: H5, the frozen predictor on the validation cells;
- :mod:`~lagtheory.experiments.confirmatory.records`: the committed records and their re-run sample;
- :mod:`~lagtheory.experiments.confirmatory.answer`: the book's one answer, in sentences from the records;
- :mod:`~lagtheory.experiments.confirmatory.figures`: the verdict chapter's figures of the records;
- :mod:`~lagtheory.experiments.confirmatory.step_size`: failure and recognition against the base rate;
- :mod:`~lagtheory.experiments.confirmatory.predictor_breakdown`: H5 split by optimiser and task family;
- :mod:`~lagtheory.experiments.confirmatory.sensitivity`: outcome (c)'s Monte Carlo error;
- :mod:`~lagtheory.experiments.confirmatory.stability`: an exploratory successor to the predictor, scored on
  the validation cells.
- the registered transformer study, by job: :mod:`~lagtheory.experiments.confirmatory.transformer_rows` (the rows
  of the pilot's and the study's records), :mod:`~lagtheory.experiments.confirmatory.transformer_design` (its frozen
  design), :mod:`~lagtheory.experiments.confirmatory.transformer_text` (its registered section's text),
  :mod:`~lagtheory.experiments.confirmatory.transformer_runs` (its runs), and
  :mod:`~lagtheory.experiments.confirmatory.transformer_analysis` (its registered analysis);
  :mod:`~lagtheory.experiments.confirmatory.transformer` keeps the names and the command its registered section
  quotes, as an alias;
- :mod:`~lagtheory.experiments.confirmatory.lag_study`: the registered lag study (does the attention learn later
  than the output layer, timed by what the model computes);
- :mod:`~lagtheory.experiments.confirmatory.transformer_report`: that study reported as it is (power against the
  observed effect, ceilings, intervals, the grid rate by rate, the paired TOST) and a replication planned from it;
- :mod:`~lagtheory.experiments.confirmatory.transformer_replication`: the registered replication of that study
  (frozen design, units, registered analysis);
- :mod:`~lagtheory.experiments.confirmatory.replication_answer`: the replication's answer in words and tables.
"""
