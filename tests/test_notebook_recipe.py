"""Re-executing a chapter with no edit leaves its notebook unchanged.

The recipe is ``python book/_ext/execute_chapter.py <chapter>`` (README, introduction,
Contributing page). It stores every notebook in one normal form: without execution
timestamps, with each run of consecutive prints of a cell joined. Every committed notebook
must already be in that form (else the next re-execution rewrites it), and one chapter,
re-executed, must come back byte for byte.
"""

from __future__ import annotations

import difflib
import fcntl
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from execute_chapter import chapter_files, execute, normalise, serialise  # book/_ext
from nbclient import NotebookClient
from nbclient.util import run_sync

import conftest as session  # the repository's root conftest.py: kernels start one at a time

BOOK = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_notebook_is_stored_in_the_normal_form(notebook: Path) -> None:
    text = notebook.read_text()
    assert serialise(normalise(nbformat.reads(text, as_version=4))) == text, (
        f"{notebook.name} is not stored as the recipe writes it: run python book/_ext/execute_chapter.py {notebook.stem}"
    )


def test_normalise_joins_consecutive_prints_and_drops_timestamps() -> None:
    cell = nbformat.v4.new_code_cell("print(1); print(2)")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-12-04T04:38:17.345511Z"}
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a"),
        nbformat.v4.new_output("stream", name="stdout", text="\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "x"}),
        nbformat.v4.new_output("stream", name="stdout", text="b\n"),
        nbformat.v4.new_output("stream", name="stderr", text="c\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    normalise(notebook)
    assert "execution" not in cell.metadata
    assert notebook.metadata["language_info"] == {"name": "python"}
    # joined only where consecutive and of one name: the order of what the reader sees is kept
    assert [(o.output_type, o.get("name"), o.get("text")) for o in cell.outputs] == [
        ("stream", "stdout", "a\n"),
        ("display_data", None, None),
        ("stream", "stdout", "b\n"),
        ("stream", "stderr", "c\n"),
    ]


def test_a_chapter_is_named_by_name_notebook_or_text_form() -> None:
    expected = (BOOK / "threshold.ipynb", BOOK / "text" / "threshold.md")
    for name in ("threshold", "book/threshold.ipynb", "book/text/threshold.md"):
        assert chapter_files(name) == expected
    with pytest.raises(SystemExit, match=r"chapter must be one of .*threshold.*got 'thresold'"):
        chapter_files("thresold")


def test_reexecuting_a_chapter_with_no_edit_leaves_it_byte_for_byte() -> None:
    """The threshold chapter (about 10 s), the one the README's recipe names; its kernel starts under the
    kernel start-up lock (the root conftest.py), and its cells run beside the other worker's kernels."""
    notebook = BOOK / "threshold.ipynb"
    executed = execute(notebook)
    stored = notebook.read_text()
    diff = difflib.unified_diff(stored.splitlines(), executed.splitlines(), "stored", "re-executed", lineterm="", n=0)
    assert executed == stored, "re-executing threshold.ipynb changed it:\n" + "\n".join(list(diff)[:60])


RECIPE_PAGES = (BOOK.parent / "README.md", BOOK / "intro.md", BOOK / "contributing.md", BOOK / "teaching.md")
BASH_BLOCK = re.compile(r"^(?P<indent>[ ]*)```bash\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)


def test_one_recipe_in_the_readme_the_introduction_and_the_contributing_page() -> None:
    """Every page that shows how to re-execute a chapter shows the same commands, and none shows
    ``jupyter execute`` (which stores timestamps and split prints)."""
    recipes = {}
    for page in RECIPE_PAGES:
        blocks = [textwrap.dedent(match["body"]) for match in BASH_BLOCK.finditer(page.read_text())]
        assert not [block for block in blocks if "jupyter execute" in block], f"{page.name} gives `jupyter execute`"
        recipes[page.name] = {block for block in blocks if "execute_chapter.py" in block}
    assert all(recipes[page.name] for page in RECIPE_PAGES[:3]), f"a page gives no recipe: {recipes}"
    assert len(set().union(*recipes.values())) == 1, f"the pages give different recipes: {recipes}"


def lock_is_held() -> bool:
    """Whether someone holds the kernel start-up lock: tried, without waiting, from a file opened anew (an
    flock on another open of the file conflicts even within this process)."""
    with session.KERNEL_START_LOCK.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_a_notebook_clients_kernel_starts_under_the_lock_which_it_then_gives_up(monkeypatch, tmp_path) -> None:
    """nbclient's kernel start, as the root conftest.py wraps it (the recipe's and the explore page's
    kernels): the kernel's start and the client's wait for its answer hold the lock, and the lock is free
    once they return, so the cells run outside it. Probes stand in for the kernel and its client; the lock
    is a file of this test's own (the session's lock may be held by another worker's kernel start)."""
    monkeypatch.setattr(session, "KERNEL_START_LOCK", tmp_path / "kernel-start.lock")
    seen = []

    async def kernel_start(client: NotebookClient, **kwargs) -> None:
        seen.append(("kernel", lock_is_held()))

    async def client_start() -> None:
        seen.append(("client", lock_is_held()))

    assert NotebookClient.async_start_new_kernel is session.start_notebook_client_kernel_in_turn
    monkeypatch.setattr(session, "_start_notebook_client_kernel", kernel_start)
    client = NotebookClient(nbformat.v4.new_notebook())
    monkeypatch.setattr(client, "async_start_new_kernel_client", client_start)
    assert not lock_is_held()
    run_sync(client.async_start_new_kernel)()
    assert seen == [("kernel", True), ("client", True)]
    assert not lock_is_held()
