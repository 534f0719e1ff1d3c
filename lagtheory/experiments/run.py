"""Run a study of the empirical chapters and write its per-seed record.

    python -m lagtheory.experiments.run languages|regression|icl [--seeds 30] [--output PATH]

writes ``book/data/summary_<study>.json`` (:mod:`lagtheory.experiments.records`)
with a progress bar over the training steps of all cells. Set the number of
torch threads with ``--threads`` (default 1, the setting of the chapters).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from tqdm import tqdm

from lagtheory.schedules import SCHEDULE_NAMES

from .records import study_record, write_record
from .studies import STUDIES, all_total_steps, run_cells

BOOK_DATA = Path(__file__).resolve().parents[2] / "book" / "data"


def main(arguments: list[str] | None = None) -> Path:
    """Parse the command line, run the study, write the record; return its path."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("study", choices=sorted(STUDIES))
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default: the study's number)")
    parser.add_argument("--output", type=Path, default=None, help="default book/data/summary_<study>.json")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(arguments)
    torch.set_num_threads(args.threads)
    the_study = STUDIES[args.study]
    seeds = tuple(range(args.seeds if args.seeds is not None else the_study.seeds))
    output = args.output or BOOK_DATA / f"summary_{the_study.name}.json"
    total = all_total_steps(the_study.cells, SCHEDULE_NAMES)
    with tqdm(
        total=total,
        desc=f"{the_study.name}: {len(the_study.cells)} cells x {len(seeds)} seeds",
        unit="step",
        disable=args.quiet,
    ) as bar:
        results = run_cells(the_study, the_study.cells, SCHEDULE_NAMES, seeds, bar.update)
    command = f"python -m lagtheory.experiments.run {the_study.name} --seeds {len(seeds)}"
    write_record(study_record(the_study, results, SCHEDULE_NAMES, seeds, command), output)
    print(f"wrote {output}", file=sys.stderr)
    return output


if __name__ == "__main__":
    main()
