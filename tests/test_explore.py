"""The explore page (book/explore.ipynb) holds its checks for other numbers than its own.

A teacher changes the parameters cell and runs every cell; each check there states a theorem for any
valid values. Here the page runs with three other parameter sets, replacing its parameters cell (tagged
``parameters``): longer and shorter geometric lengths, power-law lengths, step sizes above and below the
phase boundary. Every cell must run without error, and between them the sets must reach both branches of
the recognition cell (t1 > 1 and t1 < 1).

The sets run in turn in one kernel, as a teacher re-runs the page after changing its parameters cell: every
name a cell reads is assigned by the page itself, in an earlier cell of the same run, so no run reads what
another left behind; a ``%reset -f`` before each run makes sure of it (a name the page stopped assigning fails
here with a NameError, as in a fresh kernel). Only the imports and the package's caches of pure functions are
shared, which saves a kernel start and the imports of the package (about 4 s of CPU) per run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
EXPLORE = ROOT / "book" / "explore.ipynb"
HEADER = "from lagtheory import Geometric, PowerLaw  # the two families of lengths\n\n"
OTHER_NUMBERS = {
    "short lengths, above the boundary": "LENGTHS = Geometric(4.0)\nETA1 = 0.5\nETA2 = 300.0\nETA3 = 2.0\nSTEPS3 = 10\nGRID = 5\n",
    "long lengths, below the boundary": "LENGTHS = Geometric(40.0)\nETA1 = 2.0\nETA2 = 30.0\nETA3 = 4.0\nSTEPS3 = 10\nGRID = 5\n",
    "power-law lengths, above the boundary": "LENGTHS = PowerLaw(3.0)\nETA1 = 1.0\nETA2 = 400.0\nETA3 = 1.0\nSTEPS3 = 10\nGRID = 5\n",
}


@pytest.fixture(scope="module")
def run_with() -> Iterator[Callable[[str], str]]:
    """``run_with(parameters)``: everything the page prints when run with ``parameters`` in place of its
    parameters cell, each run after a ``%reset -f`` in one kernel started for the module (its start takes the
    kernel start-up lock of the root conftest.py; the cells run outside it)."""
    client = NotebookClient(
        nbformat.v4.new_notebook(),
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXPLORE.parent)}},
    )

    def run(parameters: str) -> str:
        notebook = nbformat.read(EXPLORE, as_version=4)
        (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        cell.source = HEADER + parameters
        notebook.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))
        client.nb = notebook
        client.execute(cleanup_kc=False)  # the kernel stays for the next run
        return "".join(
            "".join(output.get("text", "")) for c in notebook.cells if c.cell_type == "code" for output in c.outputs
        )

    try:
        yield run
    finally:
        if client.km is not None:
            client._cleanup_kernel()


@pytest.fixture(scope="module")
def printed(run_with) -> dict[str, str]:
    return {name: run_with(parameters) for name, parameters in OTHER_NUMBERS.items()}


@pytest.mark.parametrize("name", OTHER_NUMBERS)
def test_the_page_runs_and_checks_with_other_numbers(printed, name):
    assert "every pair above the curve does" in printed[name]


def test_the_other_numbers_reach_both_sides_of_the_boundary(printed):
    assert any("> 1: recognised" in text for text in printed.values())
    assert any("< 1:" in text for text in printed.values())


def statement_number(label: str) -> str:
    """The number the book gives a statement ("5.1"): its chapter's place among the numbered chapters of
    _toc.yml, then its place among the statements of its kind in that chapter (sphinx-proof counts each
    kind apart)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = [c["file"] for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
    for number, chapter in enumerate(chapters, start=1):
        text = (ROOT / "book" / "text" / f"{Path(chapter).name}.md").read_text(encoding="utf-8")
        statements = re.findall(r"^`{3,}\{prf:(\w+)\}[^\n]*\n(?::\w+:[^\n]*\n)*?:label: ([\w-]+)", text, flags=re.M)
        for kind, found in statements:
            if found == label:
                same_kind = [name for k, name in statements if k == kind]
                return f"{number}.{same_kind.index(label) + 1}"
    raise AssertionError(f"no statement {label}")


def test_a_value_out_of_range_is_refused_by_name(run_with):
    with pytest.raises(Exception, match="ETA3 must be at most 4") as refused:
        run_with("LENGTHS = Geometric(10.0)\nETA1 = 1.0\nETA2 = 150.0\nETA3 = 5.0\nSTEPS3 = 20\nGRID = 9\n")
    message = str(refused.value)
    # the reader's name of the statement, not the book's internal label, and what the error leaves behind
    assert f"Theorem {statement_number('thm-three-phase')}" in message
    assert "thm-" not in message
    assert "stale" in message


def test_the_page_prints_no_internal_label():
    notebook = nbformat.read(EXPLORE, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for string in re.findall(r"""f?"[^"\n]*"|f?'[^'\n]*'""", cell.source):
                assert not re.search(r"\b(thm|lem|prop|def|cor|eq)-[a-z]", string), string
