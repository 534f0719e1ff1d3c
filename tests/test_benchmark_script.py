"""The benchmark script keeps up with the package: it imports, and the cells its engine rows time
exist in the stored records and build engine tasks (timings themselves are never tested)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from lagtheory.experiments.studies import Cell

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"


def load_bench():
    """The script as a module; the thread variables it sets for its own process are put back."""
    saved = dict(os.environ)
    try:
        spec = importlib.util.spec_from_file_location("bench", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


def test_engine_cells_are_the_stored_centre_cells():
    bench = load_bench()
    cells = bench.engine_cells()
    assert [(name, cell.task) for name, cell, _ in cells] == list(bench.ENGINE_TASKS)
    for _, cell, task in cells:
        assert isinstance(cell, Cell) and cell.level == "scale=0.3 ratio=1" and cell.optimiser == "sgd"
        assert set(task.parameter_shapes()) and task.name
