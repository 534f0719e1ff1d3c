"""Parameter documentation shared by the experiments' functions, written once (SciPy's docfiller pattern).

A numpydoc entry that several functions share (the same parameter, type and meaning) is written here once,
in :data:`PARAMETERS`, and a docstring names it by a line ``%(key)s`` in its ``Parameters`` or ``Attributes``
section; :func:`fill_doc`, applied to the function or class, puts the entry in place when the module is
imported, so the API page, ``help()`` and the docstring tests read it whole. An entry written out in a
docstring says something its shared form does not (``tests/test_docstrings.py`` finds verbatim repeats).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

Documented = TypeVar("Documented", bound=Callable[..., Any])

PARAMETERS: Mapping[str, tuple[str, str]] = {
    "accounting": (
        "accounting : str, optional",
        '"total" (default) or "joint".',
    ),
    "alpha": (
        "alpha : float",
        "The level, in (0, 1).",
    ),
    "alphabet_size": (
        "alphabet_size : int, optional",
        "The number k of letters, >= 2.",
    ),
    "args": (
        "args : argparse.Namespace",
        "The parsed command line.",
    ),
    "arguments": (
        "arguments : list of str, optional",
        "The command line without the program's name (default ``sys.argv[1:]``).",
    ),
    "ax": (
        "ax : matplotlib.axes.Axes",
        "Where to draw.",
    ),
    "batch": (
        "batch : object",
        "A batch of :meth:`sample`, with or without a leading seed dimension.",
    ),
    "batch_size": (
        "batch_size : int",
        "Words per step and seed.",
    ),
    "batched_params": (
        "params : mapping of str to torch.Tensor",
        "Name -> (rows, seeds, ...).",
    ),
    "beta": (
        "beta : torch.Tensor",
        "(..., B, D), the task vectors.",
    ),
    "cap": (
        "cap : float, optional",
        "The task's cap (:func:`failure_cap`), computed if not given.",
    ),
    "cell": (
        "cell : Cell",
        "The cell.",
    ),
    "cell_name": (
        "cell : str",
        "A cell of the record.",
    ),
    "cell_schedule": (
        "schedule : str",
        "A schedule of the cell.",
    ),
    "class_counts": (
        "positives, negatives : int",
        "The numbers of positive and negative cells, >= 0.",
    ),
    "cls_tokens": (
        "tokens : torch.Tensor",
        "int64 (batch, length), the classification token first.",
    ),
    "coefficients": (
        "coefficients : sequence of float",
        "The frozen baseline's three coefficients.",
    ),
    "command": (
        "command : str",
        "The command that writes the record, stored in it.",
    ),
    "compared_language": (
        "language : str",
        "A compared language.",
    ),
    "comparison": (
        "comparison : Comparison",
        "An adjusted comparison of a schedule against joint.",
    ),
    "confirmatory_analysis": (
        "analysis : mapping",
        "``book/data/confirmatory/analysis.json``.",
    ),
    "config": (
        "config : TrainingConfig",
        "The scales and the attention's initialisation.",
    ),
    "configuration_record": (
        "record : mapping",
        "The transformer pilot's configuration stage's record.",
    ),
    "confirmatory_cell": (
        "cell : ConfirmatoryCell",
        "The cell.",
    ),
    "confirmatory_schedule": (
        "schedule : str",
        '"joint" or "lag".',
    ),
    "counts": (
        "counts : torch.Tensor",
        "float64 (..., B), the context sizes m >= 1.",
    ),
    "curves": (
        "curves : ndarray",
        "float64 (..., points).",
    ),
    "d": (
        "d : array_like",
        "1-d per-seed differences, at least 2, finite (as :func:`compare` passes them; not checked here).",
    ),
    "design": (
        "design : TaskDesign",
        "The task.",
    ),
    "design_file": (
        "path : pathlib.Path, optional",
        "The transformer study's design file (default :data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN`).",
    ),
    "device": (
        "device : str, optional",
        "Where the engine trains.",
    ),
    "dfa": (
        "dfa : DFA",
        "The language, over an alphabet of at least 2 symbols.",
    ),
    "dfa_language": (
        "dfa : DFA",
        "The language.",
    ),
    "dfa_words": (
        "words : ndarray",
        "int64 (rows, n), symbols 0..k-1 in the order of ``dfa.alphabet``.",
    ),
    "dim": (
        "dim : int",
        "The input dimension D, >= 1.",
    ),
    "dim_optional": (
        "dim : int, optional",
        "The input dimension D, >= 1.",
    ),
    "effect_digits": (
        "digits : int, optional",
        "Decimals of the effect and its interval.",
    ),
    "engine_seeds": (
        "seeds : sequence of int",
        "Distinct integers >= 0.",
    ),
    "engine_task": (
        "task : Task",
        "An engine task with parameters in both groups.",
    ),
    "execute": (
        "execute : callable",
        "How the units run (:data:`Execute`).",
    ),
    "exploratory_seeds": (
        "seeds : sequence of int, optional",
        "Distinct integers >= 0 (default 0 to 29).",
    ),
    "features": (
        'features : {"tokens", "bigram", "cyclic-bigram"}',
        "The feature kind.",
    ),
    "file_output": (
        "output : pathlib.Path",
        "The file to write (its folder exists).",
    ),
    "folder": (
        "folder : pathlib.Path, optional",
        "Where the committed records live (default :data:`~lagtheory.experiments.paths.CONFIRMATORY_RECORDS`).",
    ),
    "generator_seed": (
        "seed : int, optional",
        "The generator's seed (default 0).",
    ),
    "grid": (
        "grid : mapping",
        "The grid stage's record.",
    ),
    "grid_optimiser": (
        "optimiser : str",
        'A key of :data:`~lagtheory.experiments.confirmatory.registration.RATE_GRIDS` ("sgd" or "adam").',
    ),
    "increasing_lengths": (
        "lengths : sequence of int",
        "Strictly increasing lengths >= 1.",
    ),
    "inputs": (
        "inputs : torch.Tensor",
        "(..., B, M, D), zero on padding.",
    ),
    "keep": (
        "keep : torch.Tensor",
        "bool (batch, length), True at real tokens.",
    ),
    "key_query": (
        "key_query : torch.Tensor",
        "K (..., D+1, D), any leading (schedule, seed) dimensions.",
    ),
    "label": (
        "label : {1, -1}",
        "+1 (in the language) or -1 (outside).",
    ),
    "labels": (
        "labels : torch.Tensor",
        "(..., B, M), zero on padding.",
    ),
    "language_task": (
        "task : LanguageSpec",
        "The language task (its DFA, features and position scores).",
    ),
    "languages_record": (
        "record : mapping",
        "The languages record.",
    ),
    "length": (
        "length : int",
        "The length, >= 1.",
    ),
    "lengths": (
        "lengths : sequence of int",
        "A non-empty sequence of lengths >= 1.",
    ),
    "letters": (
        "alphabet_size : int",
        "The number k of letters, >= 2.",
    ),
    "log_ratio": (
        "log_ratio : array_like",
        "log10 of the attention/output step-size ratio of each cell.",
    ),
    "log_scale": (
        "log_scale : array_like",
        "log10 of the readout scale of each cell.",
    ),
    "marker": (
        "marker : float, optional",
        "The marker kappa, finite and > 0.",
    ),
    "mask_lengths": (
        "lengths : torch.Tensor",
        "(B,), the number of True entries of each mask row.",
    ),
    "min_context": (
        "min_context : int",
        "The smallest context size, >= 1.",
    ),
    "model": (
        "model : ShallowTransformer",
        "A linear-readout model of this task (as ``task.model()`` builds it).",
    ),
    "moments": (
        "moments : bool, optional",
        "Whether to compute the moment matrices.",
    ),
    "n": (
        "n : int",
        "The number of pairs, >= 2.",
    ),
    "normed_input": (
        "x : torch.Tensor",
        "(batch, length, d), the layer-normed input.",
    ),
    "optimiser": (
        'optimiser : {"sgd", "adam"}',
        "The optimiser.",
    ),
    "pair_mask": (
        "mask : torch.Tensor",
        "bool (..., B, M), True on the real pairs.",
    ),
    "paired_margin": (
        "margin : float",
        "The equivalence margin of the paired difference p10 - p01, in (0, 1).",
    ),
    "pairs": (
        "n : int",
        "The pairs (seeds), >= 1.",
    ),
    "parse": (
        "parse : argparse.ArgumentParser",
        "Its parser.",
    ),
    "pilot_rows": (
        "rows : mapping",
        "Row key -> row (:func:`~lagtheory.experiments.confirmatory.transformer_rows.pilot_rows`).",
    ),
    "predictor_seeds": (
        "seeds : sequence of int, optional",
        "Distinct integers >= 0 (default :data:`PREDICTOR_SEEDS`).",
    ),
    "probe_words": (
        "words : ndarray",
        "int64 (words, n).",
    ),
    "progress": (
        "progress : callable, optional",
        "Called with 1 after every step.",
    ),
    "prompt_batch": (
        "batch : PromptBatch",
        "The prompts (B, M, D), without a seed dimension.",
    ),
    "prompt_batch_seeded": (
        "batch : PromptBatch",
        "The prompts, with or without a seed dimension.",
    ),
    "prompt_query": (
        "query : torch.Tensor",
        "(..., B, D).",
    ),
    "queries": (
        "queries : int or None",
        "Only the first ``queries`` positions ask (None: every position).",
    ),
    "query": (
        "query : torch.Tensor",
        "q (..., D), any leading (schedule, seed) dimensions.",
    ),
    "query_label": (
        "query_label : torch.Tensor",
        "(..., B).",
    ),
    "record": (
        "record : mapping",
        "A study record (:mod:`lagtheory.experiments.exploratory.records`).",
    ),
    "record_output": (
        "output : pathlib.Path",
        "The record to write (its folder exists).",
    ),
    "record_task": (
        "task : str",
        "A task of the record.",
    ),
    "records": (
        "records : mapping of str to mapping",
        "Study name -> exploratory record (:func:`~lagtheory.experiments.exploratory.records.load_exploratory`).",
    ),
    "registration_page": (
        "page : pathlib.Path, optional",
        "The registration page (default :data:`~lagtheory.experiments.paths.REGISTRATION_PAGE`).",
    ),
    "replication_analysis": (
        "analysis : mapping",
        "The registered replication's analysis, outcome -> variant -> language -> entry "
        "(:func:`~lagtheory.experiments.confirmatory.transformer_replication.analyse_replication`).",
    ),
    "replication_design": (
        "design : mapping",
        "The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).",
    ),
    "resamples": (
        "resamples : int, optional",
        "Bootstrap draws, an integer >= 100.",
    ),
    "result": (
        "result : CellResult",
        "The cell's runs.",
    ),
    "rng": (
        "rng : numpy.random.Generator or list of numpy.random.Generator",
        "One generator, or a non-empty list of them (one per seed).",
    ),
    "row_params": (
        "params : mapping of str to torch.Tensor",
        "``u``, ``theta`` (and ``s``), each with leading (row, seed) dimensions.",
    ),
    "s": (
        "s : array_like or None",
        "The position scores (:func:`position_scores`; None or ignored without them), finite.",
    ),
    "schedule": (
        "schedule : str",
        "The schedule compared with joint.",
    ),
    "schedule_optional": (
        "schedule : str, optional",
        "The schedule compared with joint.",
    ),
    "schedule_params": (
        "params : mapping of str to torch.Tensor",
        "The parameters, each with leading (schedule, seed) dimensions.",
    ),
    "score_factor": (
        "factor : torch.Tensor",
        "(batch,), the scores' factor (log m, or 1).",
    ),
    "section": (
        "section : str, optional",
        'A key of :data:`~lagtheory.experiments.confirmatory.registration.SECTIONS` (default ``"confirmatory"``).',
    ),
    "seeds": (
        "seeds : sequence of int",
        "The seeds.",
    ),
    "sequence_setting": (
        "train_min, train_max, test_sizes, test_size, test_seed",
        "As in :class:`~lagtheory.experiments.tasks.sequences.driver.SequenceSetting` (context sizes).",
    ),
    "stage": (
        "stage : str",
        "One of :data:`STAGES`.",
    ),
    "step_size": (
        "step_size : float",
        "eta, finite and > 0.",
    ),
    "steps": (
        "steps : int",
        "The number of steps.",
    ),
    "step_outcome": (
        "outcome : str",
        "A key of :data:`~lagtheory.experiments.confirmatory.step_size.OUTCOMES`.",
    ),
    "stream_labels": (
        "labels : torch.Tensor",
        "float64 (seeds, steps, batch), +-1.",
    ),
    "stream_step": (
        "step : int",
        "The step, below the stream's number of steps.",
    ),
    "study": (
        "study : str",
        "The study's name.",
    ),
    "task_name": (
        "task : str",
        "The task.",
    ),
    "task_optional": (
        "task : Task, optional",
        "The engine task, if already built.",
    ),
    "test_seed": (
        "test_seed : int, optional",
        "Seeds the test words, >= 0.",
    ),
    "text": (
        "text : str",
        "The page's text.",
    ),
    "the_study": (
        "the_study : Study",
        "The study.",
    ),
    "theta_u": (
        "theta, u : array_like",
        "(models, d) or (d,), finite.",
    ),
    "timed_task": (
        "task : LanguageRuns or TransformerLanguageRuns",
        "The task.",
    ),
    "token_dim": (
        "dim : int",
        "The token dimension D, >= 2.",
    ),
    "token_mask": (
        "mask : torch.Tensor",
        "bool (B, N).",
    ),
    "tokens": (
        "tokens : torch.Tensor",
        "float64 (B, N, D).",
    ),
    "transformer_analysis": (
        "analysis : mapping",
        "The registered transformer analysis (``book/data/transformer_study/analysis.json``).",
    ),
    "transformer_design": (
        "design : mapping",
        "The registered transformer design (:func:`~lagtheory.experiments.confirmatory.transformer_design.load_design`).",
    ),
    "transformer_record": (
        "record : mapping",
        "The registered transformer study's record (``book/data/transformer_study/study.json.gz``).",
    ),
    "transformer_setting": (
        "setting : TransformerSetting",
        "The data, tests and architecture.",
    ),
    "transformer_shape": (
        "shape : TransformerShape",
        "The architecture.",
    ),
    "units": (
        "units : mapping of str to object",
        "Unit name -> payload.",
    ),
    "value": (
        "value : torch.Tensor",
        "w (..., D+1), the same leading dimensions.",
    ),
    "width": (
        "width : int",
        "The width d.",
    ),
    "word_length": (
        "length : int",
        "The word length, >= 2.",
    ),
    "word_lengths": (
        "lengths : ndarray",
        "int64 (rows,), their lengths.",
    ),
    "workers": (
        "workers : int",
        "Worker processes of the local dask cluster.",
    ),
}
"""Key -> (the entry's first line, ``name : type``; its description), in the book's numpydoc form.

:meta hide-value:
"""

PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)%\((?P<key>\w+)\)s[ ]*$", re.MULTILINE)
"""A line that is only ``%(key)s`` (its indentation kept).

:meta hide-value:
"""


def entry(key: str, indent: str = "") -> str:
    """The numpydoc entry ``key`` of :data:`PARAMETERS`: its first line at ``indent``, its description four
    spaces deeper.

    Parameters
    ----------
    key : str
        A key of :data:`PARAMETERS`.
    indent : str, optional
        The indentation of the entry's first line (default none).

    Returns
    -------
    str
        The entry, two lines.

    Raises
    ------
    KeyError
        If ``key`` is not a key of :data:`PARAMETERS`.

    Examples
    --------
    >>> print(entry("cell_name", "    "))
        cell : str
            A cell of the record.
    """
    header, description = PARAMETERS[key]
    return f"{indent}{header}\n{indent}    {description}"


def fill_doc(documented: Documented) -> Documented:
    """Put the shared entries of :data:`PARAMETERS` in place of the ``%(key)s`` lines of a function's or
    class's docstring.

    Parameters
    ----------
    documented : callable
        A function or class whose docstring names shared entries.

    Returns
    -------
    callable
        ``documented`` itself, its ``__doc__`` filled.

    Raises
    ------
    KeyError
        If a ``%(key)s`` line names no entry of :data:`PARAMETERS` (at import: a misspelt key fails at once).
    ValueError
        If the docstring names no shared entry (the decorator would do nothing).
    """
    text = documented.__doc__ or ""
    if not PLACEHOLDER.search(text):
        raise ValueError(f"{documented.__qualname__}'s docstring names no shared entry: drop @fill_doc")
    documented.__doc__ = PLACEHOLDER.sub(lambda match: entry(match["key"], match["indent"]), text)
    return documented
