"""Run a study of the empirical chapters and write its per-seed record.

    python -m lagtheory.experiments.run languages|regression|icl [--seeds 30] [--output PATH]

calibrates the base rates and runs every cell of the study
(:func:`lagtheory.experiments.studies.run_study`), printing the time each task
took, and writes ``book/data/summary_<study>.json``
(:mod:`lagtheory.experiments.records`), with a progress bar over the engine
steps of all calibration and sweep runs. Set the number of
torch threads with ``--threads`` (default 1, the setting of the chapters).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from tqdm import tqdm

from .records import study_record, write_record
from .studies import STUDIES, run_study, study_steps

BOOK_DATA = Path("book") / "data"
"""Where records go by default: ``book/data`` under the working directory, the repository root
(the package may be installed as a wheel, far from any checkout)."""


def main(arguments: list[str] | None = None) -> Path:
    """Parse the command line, run the study, write the record; return its path."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("study", choices=sorted(STUDIES))
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default: the study's number)")
    parser.add_argument(
        "--output", type=Path, default=None, help="default book/data/summary_<study>.json under the working directory"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(arguments)
    if args.output is None and not BOOK_DATA.is_dir():
        parser.error(
            f"--output: no folder {BOOK_DATA} in the working directory; run from the repository root or pass a path"
        )
    torch.set_num_threads(args.threads)
    the_study = STUDIES[args.study]
    seeds = tuple(range(args.seeds if args.seeds is not None else the_study.seeds))
    output = args.output or BOOK_DATA / f"summary_{the_study.name}.json"
    with tqdm(
        total=study_steps(the_study),
        desc=f"{the_study.name}: {len(the_study.tasks)} tasks x 2 optimisers, {len(seeds)} seeds",
        unit="step",
        disable=args.quiet,
    ) as bar:
        calibrations, results, seconds = run_study(the_study, seeds, bar.update)
    for task, value in seconds.items():
        print(f"{task}: {value:.0f} s (calibration and sweep, both optimisers)", file=sys.stderr)
    command = f"python -m lagtheory.experiments.run {the_study.name} --seeds {len(seeds)}"
    write_record(study_record(the_study, calibrations, results, seeds, command, seconds), output)
    print(f"wrote {output}", file=sys.stderr)
    return output


if __name__ == "__main__":
    main()
