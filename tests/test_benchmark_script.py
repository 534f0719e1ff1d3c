"""The benchmark script keeps up with the package: it imports, and the cells its engine rows time
exist in the stored records and build engine tasks (timings themselves are never tested)."""

from __future__ import annotations

import bench  # benchmarks/bench.py (pytest.ini's pythonpath)

from lagtheory.experiments.exploratory.design import Cell


def test_engine_cells_are_the_stored_centre_cells():
    cells = bench.engine_cells()
    assert [(name, cell.task) for name, cell, _ in cells] == list(bench.ENGINE_TASKS)
    for _, cell, task in cells:
        assert isinstance(cell, Cell) and cell.level == "scale=0.3 ratio=1" and cell.optimiser == "sgd"
        assert set(task.parameter_shapes()) and task.name


def test_each_certified_twin_names_one_cell_of_its_chapter():
    import nbformat

    for chapter, _, *markers in bench.CERTIFIED_TWINS:
        notebook = nbformat.read(bench.ROOT / "book" / f"{chapter}.ipynb", as_version=4)
        for marker in markers:
            assert sum(marker in cell.source for cell in notebook.cells if cell.cell_type == "code") == 1, marker
