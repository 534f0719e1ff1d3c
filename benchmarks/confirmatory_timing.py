"""Time the confirmatory grid stage from measured units and extrapolate the whole stage.

    OPENBLAS_NUM_THREADS=1 python -m lagtheory.experiments.run confirmatory --stage grid --levels centre \
        --workers 1 --output /tmp/centres.json --quiet
    python benchmarks/confirmatory_timing.py /tmp/centres.units

reads the wall time of every finished unit (one cell: every grid rate, joint and lag under both
accountings, 100 seeds, one torch thread) and writes benchmarks/confirmatory_timing.md: the time of each
measured unit, and the grid stage's total extrapolated from them. Every task and optimiser has six cells
that train the same rows for the same steps (they differ in the readout scale, the ratio and the
attention's start), so each is charged its measured cell's time; a task or optimiser not measured is left
out and named. On 2 workers the total is divided by 2 (perfect sharing, an optimistic bound on a machine
whose 2 cores also serve other work).
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from lagtheory.experiments.confirmatory_design import confirmatory_cells


def main(folder: str) -> str:
    """The Markdown report of the units in ``folder`` (module docstring)."""
    measured: dict[tuple[str, str], float] = {}
    for path in sorted(Path(folder).glob("grid-*.json")):
        unit = json.loads(path.read_text())
        cell = unit["result"]["cells"]
        ((name, runs),) = cell.items()
        task, optimiser = name.split("/")[:2]
        measured[(task, optimiser)] = unit["result"]["seconds"]
    cells = confirmatory_cells()
    missing = sorted({(c.task, c.optimiser) for c in cells} - set(measured))
    total = sum(measured[(c.task, c.optimiser)] for c in cells if (c.task, c.optimiser) in measured)
    counted = sum((c.task, c.optimiser) in measured for c in cells)
    lines = [
        f"Measured on {platform.machine()} (2 cores shared with other work), Python {platform.python_version()}, "
        "one torch thread per worker; units of `python -m lagtheory.experiments.run confirmatory --stage grid`.",
        "",
        "**Confirmatory grid stage: one cell (all grid rates, joint + lag under both accountings, 100 seeds)**",
        "",
        "| task | optimiser | runs of 100 seeds | seconds (one core) |",
        "| --- | --- | --- | --- |",
    ]
    for (task, optimiser), seconds in sorted(measured.items()):
        runs = 33 if optimiser == "sgd" else 27
        lines.append(f"| {task} | {optimiser} | {runs} | {seconds:.0f} |")
    lines += [
        "",
        f"Extrapolated grid stage ({counted} of {len(cells)} cells, each charged its task and optimiser's measured "
        f"cell): {total / 3600:.1f} h on one core, {total / 7200:.1f} h on 2 workers.",
    ]
    if missing:
        lines.append(f"Not measured (left out of the total): {missing}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = main(sys.argv[1])
    (Path(__file__).parent / "confirmatory_timing.md").write_text(text)
    print(text)
