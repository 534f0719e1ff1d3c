"""The package's layering holds: no import cycle, and no module imports from a room above its own
(benchmarks/import_graph.py computes the graph from the source; the rooms are the package's layout)."""

from __future__ import annotations

import import_graph as G  # benchmarks/import_graph.py (pytest.ini's pythonpath)


def graph() -> dict[str, set[str]]:
    paths = G.modules()
    return {name: G.imports(name, path, set(paths)) for name, path in paths.items()}


def upward(found: dict[str, set[str]]) -> list[tuple[str, str]]:
    order = [label for label, _ in G.ROOMS]
    return sorted(
        (source, target)
        for source, targets in found.items()
        for target in targets
        if order.index(G.room(target)) > order.index(G.room(source))
    )


def test_no_cycle_and_no_upward_import():
    found = graph()
    assert G.cycles(found) == []
    assert upward(found) == []
    assert "lagtheory.experiments.run" in found and len(found) > 60


def test_a_planted_upward_import_and_cycle_are_found():
    found = graph()
    found["lagtheory.experiments.statistics.power"] = {"lagtheory.experiments.exploratory.records"}
    assert upward(found) == [("lagtheory.experiments.statistics.power", "lagtheory.experiments.exploratory.records")]
    found["lagtheory.experiments.exploratory.records"] = found["lagtheory.experiments.exploratory.records"] | {
        "lagtheory.experiments.statistics.power"
    }
    assert ["lagtheory.experiments.exploratory.records", "lagtheory.experiments.statistics.power"] in G.cycles(found)
