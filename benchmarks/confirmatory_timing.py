"""Time the confirmatory grid stage from measured units and extrapolate the whole stage.

    OPENBLAS_NUM_THREADS=1 python -m lagtheory.experiments.run confirmatory --stage grid --levels centre \
        --workers 1 --output /tmp/centres.json --quiet
    python benchmarks/confirmatory_timing.py /tmp/centres.units

reads the CPU time of every finished unit's worker (one cell: every grid rate, joint and lag under both
accountings, 100 seeds, one torch thread; CPU time is what one uncontended core takes, the wall time on a
shared machine is longer) and writes benchmarks/confirmatory_timing.md: the time of each measured unit, and
the grid stage's total extrapolated from them. Every cell of a task trains the same steps, and the cells
differ in the readout scale, the ratio and the attention's start only, so each cell is charged its task's
measured time per run (of 100 seeds) times its number of runs (33 with SGD's 11 rates, 27 with Adam's 9); a
task not measured is left out and named. On 2 workers the total is divided by 2 (perfect sharing: a lower
bound on a machine whose 2 cores also serve other work).
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from lagtheory.experiments.confirmatory.design import confirmatory_cells, grid_runs


def main(folder: str) -> str:
    """The Markdown report of the units in ``folder`` (module docstring)."""
    measured: dict[tuple[str, str], tuple[float, float, int]] = {}
    for path in sorted(Path(folder).glob("grid-*.json")):
        unit = json.loads(path.read_text())
        ((name, runs),) = unit["result"]["cells"].items()
        task, optimiser = name.split("/")[:2]
        measured[(task, optimiser)] = (unit["result"]["seconds"], unit["result"]["cpu_seconds"], len(runs))
    per_run: dict[str, float] = {}
    for (task, _), (_, cpu, runs) in measured.items():
        per_run.setdefault(task, cpu / runs)
    cells = confirmatory_cells()
    missing = sorted({c.task for c in cells} - set(per_run))
    total = sum(per_run[c.task] * len(grid_runs(c.optimiser)) for c in cells if c.task in per_run)
    counted = sum(c.task in per_run for c in cells)
    lines = [
        f"Measured on {platform.machine()} (2 cores shared with other work), Python {platform.python_version()}, "
        "one torch thread per worker; units of `python -m lagtheory.experiments.run confirmatory --stage grid`.",
        "",
        "**Confirmatory grid stage: one cell (all grid rates, joint + lag under both accountings, 100 seeds)**",
        "",
        "| task | optimiser | runs of 100 seeds | CPU seconds | wall seconds (shared machine) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for (task, optimiser), (wall, cpu, runs) in sorted(measured.items()):
        lines.append(f"| {task} | {optimiser} | {runs} | {cpu:.0f} | {wall:.0f} |")
    lines += [
        "",
        f"Extrapolated grid stage ({counted} of {len(cells)} cells, each charged its task's CPU seconds per run "
        f"times its runs, Adam's priced as SGD's): {total / 3600:.1f} h on one core, {total / 7200:.1f} h on 2 workers.",
    ]
    if missing:
        lines.append(f"Not measured (left out of the total): {missing}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = main(sys.argv[1])
    (Path(__file__).parent / "confirmatory_timing.md").write_text(text)
    print(text)
