"""Re-execute chapters so that a notebook changes only where its outputs do.

The recipe after editing a chapter (README, introduction, Contributing page)::

    python book/_ext/execute_chapter.py threshold

brings the notebook's inputs up to date from its text form (``jupytext --sync
book/text/threshold.md``), executes it in a fresh kernel from the ``book`` folder, and
stores it in one normal form (:func:`normalise`): no execution timestamps, each run of
consecutive prints of a cell in one output, no interpreter patch version. Executing
``jupyter execute --inplace`` instead writes every cell's start and end times and splits a
cell's printed text wherever the kernel happened to flush it, so re-executing an unchanged
chapter rewrote up to 184 lines of it. Several chapters may be named at once; each argument
is a chapter name (``threshold``), its notebook (``book/threshold.ipynb``) or its text form
(``book/text/threshold.md``). ``tests/test_notebook_recipe.py`` checks that every stored
notebook is in the normal form and that re-executing a chapter leaves it byte for byte.

The kernel stores, with every figure a cell draws, the size of the figure's smallest text
(``lagtheory.palette.record_text_sizes``), which ``tests/test_figure_text.py`` holds to the
book's bounds for the PDF and a phone.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import nbformat
import yaml
from jupytext.cli import jupytext as jupytext_cli
from nbclient import NotebookClient

BOOK = Path(__file__).resolve().parent.parent
"""The ``book`` folder: the notebooks, and their text forms in ``book/text``."""

KERNEL_START = (
    "--InteractiveShellApp.exec_lines=import lagtheory.palette; lagtheory.palette.record_text_sizes(get_ipython())"
)
"""The kernel's first line: every figure's PNG output carries its smallest text size in its metadata."""

TIMEOUT = yaml.safe_load((BOOK.parent / "_config.yml").read_text())["execute"]["timeout"]
"""Seconds a cell may run: the book build's own limit (``execute.timeout`` in ``_config.yml``)."""


def chapter_files(chapter: str) -> tuple[Path, Path]:
    """The notebook and the text form of a chapter named by its name, notebook or text form."""
    name = Path(chapter).stem
    notebook, text_form = BOOK / f"{name}.ipynb", BOOK / "text" / f"{name}.md"
    if not notebook.exists() or not text_form.exists():
        chapters = sorted(path.stem for path in BOOK.glob("*.ipynb"))
        raise SystemExit(
            f"chapter must be one of {', '.join(chapters)} (its name, notebook or text form); got {chapter!r}"
        )
    return notebook, text_form


def normalise(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip what changes from one execution to the next though no output does, in place.

    Removes each cell's ``execution`` timestamps, the interpreter's patch version
    (``language_info.version``; the kernel writes the one it runs) and any stored widget
    state, and joins each run of consecutive stream outputs of one name (``stdout`` or
    ``stderr``) into one output: the kernel sends printed text in chunks that depend on
    timing, not on the cell. Returns the notebook.
    """
    notebook.metadata.get("language_info", {}).pop("version", None)
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        joined: list[nbformat.NotebookNode] = []
        for output in cell.outputs:
            previous = joined[-1] if joined else None
            if (
                previous is not None
                and output.output_type == previous.output_type == "stream"
                and output.name == previous.name
            ):
                previous.text += output.text
            else:
                joined.append(output)
        cell.outputs = joined
    return notebook


def serialise(notebook: nbformat.NotebookNode) -> str:
    """The notebook as ``nbformat.write`` stores it (the repository's notebook files)."""
    stream = io.StringIO()
    nbformat.write(notebook, stream)
    return stream.getvalue()


def execute(notebook_path: Path) -> str:
    """The notebook at ``notebook_path`` executed in a fresh kernel and normalised, as file text.

    Nothing is written; a cell that raises fails the execution (``CellExecutionError``).
    """
    notebook = nbformat.read(notebook_path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=TIMEOUT,
        kernel_name="python3",
        extra_arguments=[KERNEL_START],
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(notebook_path.parent)}},
    )
    client.execute()
    return serialise(normalise(notebook))


def main(argv: list[str] | None = None) -> None:
    """Sync, execute and store each chapter named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="+", help="chapter name, notebook or text form (threshold, ...)")
    for chapter in parser.parse_args(argv).chapters:
        notebook, text_form = chapter_files(chapter)
        jupytext_cli(["--sync", "--quiet", str(text_form)])
        executed = execute(notebook)
        if executed == notebook.read_text():
            print(f"{notebook.relative_to(BOOK.parent)}: unchanged")
        else:
            notebook.write_text(executed)
            print(f"{notebook.relative_to(BOOK.parent)}: outputs stored (see git diff)")


if __name__ == "__main__":
    main()
