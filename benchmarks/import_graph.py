"""The import graph of the package ``lagtheory``: modules, layers, imports that climb rooms, cycles.

Run from the repository root:  python benchmarks/import_graph.py [--edges]
It reads the source with :mod:`ast` (nothing is imported) and prints, for every module of
``lagtheory``, every import of another module of the package, top-level or inside a function
(``import a.b``, ``from a import b``, ``from . import b``, ``from .a import b``; importing a name
from a package counts as importing the module of that name when one exists, and the package
itself otherwise).

- **Layers**: a module that imports no other module of the package is on layer 0; any other
  module is one layer above the highest module it imports (defined when the graph has no cycle).
- **Rooms**: the package's own layout, lowest first (:data:`ROOMS`); an import from a module to
  a module of a higher room is *upward* (the core package importing the experiments, the engine
  importing a study). A package's ``__init__`` sits in the room of the package.
- **Cycles**: strongly connected components of more than one module (Tarjan), and self-imports.
- A module's ``if __name__ == "__main__":`` block is left out: it runs only as a script, never on import (the
  aliases of the one command import the command there).

Nothing here is a test; the numbers go into the issue notes.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "lagtheory"

ROOMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("lagtheory",)),
    ("base", ("lagtheory.experiments.paths", "lagtheory.experiments.parameters")),
    ("engine", ("lagtheory.experiments.engine",)),
    ("statistics", ("lagtheory.experiments.statistics",)),
    ("tasks", ("lagtheory.experiments.tasks",)),
    ("exploratory", ("lagtheory.experiments.exploratory",)),
    ("predictor", ("lagtheory.experiments.predictor",)),
    ("confirmatory", ("lagtheory.experiments.confirmatory",)),
    ("command", ("lagtheory.experiments",)),
)
"""Rooms from lowest to highest, each with the module prefixes it holds (the longest prefix wins)."""

FLAT: dict[str, str] = {
    "engine": "engine",
    "calibration": "exploratory",
    "distributed": "engine",
    "paired": "statistics",
    "power": "statistics",
    "language_catalogue": "tasks",
    "language_features": "tasks",
    "word_sampling": "tasks",
    "worst_case": "tasks",
    "language_runs": "tasks",
    "sequence_tasks": "tasks",
    "regression": "tasks",
    "icl": "tasks",
    "softmax_icl": "tasks",
    "transformer_model": "tasks",
    "transformer_languages": "tasks",
    "transformer_runs": "tasks",
    "design": "exploratory",
    "studies": "exploratory",
    "records": "exploratory",
    "regimes": "exploratory",
    "regime_figures": "exploratory",
    "exploratory": "exploratory",
    "predictor": "predictor",
    "predictor_evaluation": "predictor",
    "transformer_predictions": "predictor",
    "registration": "confirmatory",
    "confirmatory_design": "confirmatory",
    "confirmatory_runs": "confirmatory",
    "confirmatory_analysis": "confirmatory",
    "confirmatory_predictor": "confirmatory",
    "confirmatory_records": "confirmatory",
    "run": "command",
}
"""The rooms of the flat layout's modules (``lagtheory/experiments/<name>.py`` before the subpackages by job), so that
the graph before the move is measured against the same rooms as the graph after it."""


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def is_main_block(node: ast.stmt) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__":``, the block that runs only when the module is run as a
    script (an alias of the one command imports the command there), never when it is imported."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that module ``name`` (source at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(), str(path))
    script = {id(inner) for node in tree.body if is_main_block(node) for inner in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in script:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def room(name: str) -> str:
    """The room of module ``name`` (:data:`ROOMS`; flat-layout modules by :data:`FLAT`)."""
    parts = name.split(".")
    if len(parts) == 3 and parts[:2] == ["lagtheory", "experiments"] and parts[2] in FLAT:
        return FLAT[parts[2]]
    best, length = "core", 0
    for label, prefixes in ROOMS:
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > length:
                best, length = label, len(prefix)
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's layer: 0 without imports, else one above the highest module it imports."""
    layer: dict[str, int] = {}

    def depth(node: str) -> int:
        if node not in layer:
            layer[node] = 1 + max((depth(target) for target in graph[node]), default=-1)
        return layer[node]

    for node in graph:
        depth(node)
    return layer


def main() -> None:
    """Print the graph's numbers (and its upward imports and cycles; every edge with ``--edges``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every import")
    args = parser.parse_args()
    paths = modules()
    graph = {name: imports(name, path, set(paths)) for name, path in paths.items()}
    order = [label for label, _ in ROOMS]
    upward = sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if order.index(room(target)) > order.index(room(source))
    )
    found = cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    print(f"{len(graph)} modules, {edges} imports inside the package")
    if found:
        print(f"cycles: {len(found)}: " + "; ".join(" <-> ".join(component) for component in found))
    else:
        layer = layers(graph)
        print(f"layers: {max(layer.values()) + 1} (0 .. {max(layer.values())}); cycles: 0")
        by_room = defaultdict(list)
        for name in graph:
            by_room[room(name)].append(layer[name])
        for label in order:
            if by_room[label]:
                print(
                    f"  {label}: {len(by_room[label])} modules on layers {min(by_room[label])}..{max(by_room[label])}"
                )
    print(f"upward imports (to a higher room): {len(upward)}")
    for source, target in upward:
        print(f"  {source} ({room(source)}) -> {target} ({room(target)})")
    if args.edges:
        for name in sorted(graph):
            print(f"{name}: {', '.join(sorted(graph[name]))}")


if __name__ == "__main__":
    main()
