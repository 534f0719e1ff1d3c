"""How far re-running stored study runs moves their values (for the tolerance of the chapters' checks).

Run from the repository root:

    python benchmarks/record_sensitivity.py [--cells 8] [--seeds 5]

For each study record in book/data, a seeded sample of cells (every schedule of each, a seeded sample of
seeds) is trained again, alone, from its stored configuration, and every stored quantity is compared with
the fresh value: the largest relative difference per study (over finite floats; integers and booleans must
agree exactly, and the script counts those that do not). Run it twice, once as is and once with the widest
SIMD kernels switched off (NPY_DISABLE_CPU_FEATURES=X86_V3 ATEN_CPU_CAPABILITY=default on an AVX2 machine),
to see what a change of floating-point kernels does. The largest relative difference includes failed runs
(held-out loss above the cap), whose raw values the chapters' check (records.mismatches) does not compare;
the last line of each study lists what that check flags. Nothing here is a test.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from lagtheory.experiments.exploratory.records import load_record, mismatches, per_seed
from lagtheory.experiments.exploratory.runner import rerun
from lagtheory.experiments.exploratory.studies import STUDIES
from lagtheory.experiments.paths import record_path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Re-train a seeded sample of every study record's runs and print how far the fresh values are from the stored ones."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch CPU capability: {torch.backends.cpu.get_cpu_capability()}")
    for name, study in STUDIES.items():
        record = load_record(ROOT / record_path(name))
        rng = np.random.default_rng(7)
        cells = [str(c) for c in rng.choice(list(record["cells"]), size=args.cells, replace=False)]
        seeds = sorted(int(s) for s in rng.choice(record["seeds"], size=args.seeds, replace=False))
        index = [record["seeds"].index(seed) for seed in seeds]
        worst, worst_where, exact_differences, values, flagged = 0.0, "", 0, 0, []
        for cell in cells:
            schedules = record["cells"][cell]["configuration"]["schedules"]
            fresh = rerun(study, record["cells"][cell]["configuration"], schedules, seeds)
            flagged += [f"{cell}: {m}" for m in mismatches(record, cell, fresh, schedules, seeds, rtol=1e-6)]
            for quantity, array in fresh.items():
                for k, schedule in enumerate(schedules):
                    stored = per_seed(record, cell, quantity, schedule)[index]
                    now = np.asarray(array[k])
                    if stored.dtype.kind in "biu" and now.dtype.kind in "biu":
                        exact_differences += int(np.sum(stored != now))
                        continue
                    stored, now = stored.astype(float), now.astype(float)
                    both = np.isfinite(stored) & np.isfinite(now)
                    exact_differences += int(np.sum(np.isfinite(stored) != np.isfinite(now)))
                    values += int(both.sum())
                    scale = np.maximum(np.abs(stored[both]), 1e-12)
                    relative = np.abs(stored[both] - now[both]) / scale
                    if relative.size and relative.max() > worst:
                        worst, worst_where = float(relative.max()), f"{cell}, {quantity} of {schedule}"
        print(
            f"{name}: {len(cells)} cells x every schedule x {len(seeds)} seeds, {values} float values: largest relative "
            f"difference {worst:.1e} ({worst_where or '-'}); integer, boolean or finiteness differences: {exact_differences}"
        )
        print(f"  flagged by the chapters' check (records.mismatches, rtol 1e-6): {flagged or 'none'}")


if __name__ == "__main__":
    main()
