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


def _subclasses(cls: type) -> list[type]:
    """``cls`` and every class derived from it."""
    return [cls, *(sub for child in cls.__subclasses__() for sub in _subclasses(child))]


def test_every_public_call_with_a_memory_budget_has_a_memory_row():
    """Each public function or method of the package that takes ``memory_budget`` is called by a row of
    MEMORY_CALLS (a method through its class or a class derived from it), except the calls named as allocating
    nothing or being the budget's own checks."""
    import importlib
    import inspect
    import pkgutil
    import re

    import lagtheory

    calls = [call for _, call in bench.MEMORY_CALLS]

    def called(pattern: str, *also: str) -> bool:
        return any(re.search(pattern, call) and all(re.search(other, call) for other in also) for call in calls)

    missing, found = [], 0
    for info in pkgutil.walk_packages(lagtheory.__path__, "lagtheory."):
        module = importlib.import_module(info.name)
        for name, member in vars(module).items():
            if name.startswith("_") or getattr(member, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(member) and "memory_budget" in inspect.signature(member).parameters:
                found += 1
                if name not in bench.MEMORY_EXEMPT and not called(rf"(?<![\w.]){name}\("):
                    missing.append(f"{module.__name__}.{name}")
            elif inspect.isclass(member):
                for method_name, method in vars(member).items():
                    if not inspect.isfunction(method) or "memory_budget" not in inspect.signature(method).parameters:
                        continue
                    if method_name.startswith("_") and method_name != "__init__":
                        continue
                    found += 1
                    names = "|".join(cls.__name__ for cls in _subclasses(member))
                    if method_name == "__init__":
                        covered = called(rf"(?<![\w.])({names})\(")
                    else:
                        covered = called(rf"(?<![\w.])({names})\(", rf"\.{method_name}\(")
                    if not covered:
                        missing.append(f"{module.__name__}.{name}.{method_name}")
    assert found >= 20, found  # the walk finds the package's calls
    assert not missing, missing
