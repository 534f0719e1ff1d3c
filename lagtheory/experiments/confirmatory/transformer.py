"""The registered transformer study's names and command as its registered section (``book/registration.md``, its
transformer section) quotes them: ``lagtheory.experiments.confirmatory.transformer.derive_design`` and::

    python -m lagtheory.experiments.confirmatory.transformer design|run|analyse [--workers N] [--output PATH]

Registered text is never edited, so this module keeps both true as an alias: it holds no code of the study. The
study is four modules, by job: its design (:mod:`~lagtheory.experiments.confirmatory.transformer_design`, with
the rows it reads, :mod:`~lagtheory.experiments.confirmatory.transformer_rows`), its registered text
(:mod:`~lagtheory.experiments.confirmatory.transformer_text`), its runs
(:mod:`~lagtheory.experiments.confirmatory.transformer_runs`) and its analysis
(:mod:`~lagtheory.experiments.confirmatory.transformer_analysis`); their public names are importable from here too.

``design`` writes the design from the pilot's records (default ``runs/transformer_study/design.json``), ``run``
the study's record (``runs/transformer_study/study.json.gz``; refuses to start when the registered section does
not hash to its stored value or the design file is not the registered one), ``analyse`` the analysis.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from ..exploratory.transformer_pilot import CHOSEN
from ..parameters import fill_doc
from .transformer_analysis import analyse
from .transformer_design import (
    ALPHA,
    COMPUTE_DTYPE,
    CONTROL,
    DESIGN_HASH_PATTERN,
    FIRST_SEED,
    GATE_SHARE,
    GRID,
    MARGIN,
    MAX_SEEDS,
    SEARCH_LIMIT,
    TARGET_POWER,
    TEST_SEED,
    WINDOW_SHARE,
    derive_design,
    design_hash,
    design_text,
    equivalence_power,
    gate,
    load_design,
    planning,
    registered_design_hash,
    tuned,
)
from .transformer_rows import (
    OUTCOMES,
    PILOT_FOLDER,
    VARIANTS,
    criterion,
    lag_key,
    load_pilot,
    outcome_flags,
    pilot_rows,
    recognised_at,
    variant_rows,
    warm_fraction,
)
from .transformer_runs import (
    FORMAT,
    OUTPUT_FOLDER,
    STUDY_FOLDER,
    check_registered,
    run_registered,
    study_rows,
    study_units,
)
from .transformer_text import registered_text


@fill_doc
def main(arguments: list[str] | None = None) -> Path:
    """The command of the module docstring; returns the path written.

    Parameters
    ----------
    %(arguments)s

    Returns
    -------
    pathlib.Path
        The file written.
    """
    parse = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parse.add_argument("what", choices=("design", "run", "analyse"))
    parse.add_argument("--output", type=Path, default=None)
    parse.add_argument("--record", type=Path, default=STUDY_FOLDER / "study.json.gz", help="analyse: the record")
    parse.add_argument("--workers", type=int, default=2)
    parse.add_argument("--quiet", action="store_true")
    args = parse.parse_args(arguments)
    if args.what == "design":
        output = args.output or OUTPUT_FOLDER / "design.json"
        design = derive_design(load_pilot("tuning"), {**CHOSEN, "compute_dtype": COMPUTE_DTYPE})
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(design_text(design), encoding="utf-8")
        return output
    if args.what == "run":
        return run_registered(args.workers, args.output or OUTPUT_FOLDER / "study.json.gz", args.quiet)
    output = args.output or OUTPUT_FOLDER / "analysis.json"
    with gzip.open(args.record, "rt", encoding="utf-8") as handle:
        record = json.load(handle)
    result = analyse(record, load_design())
    output.parent.mkdir(parents=True, exist_ok=True)
    # a window ratio is +inf where only lag has a window (written as JSON's Infinity, as the confirmatory analysis)
    output.write_text(json.dumps(result, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {output}", file=sys.stderr)
    return output


if __name__ == "__main__":
    main()
