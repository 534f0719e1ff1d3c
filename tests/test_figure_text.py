"""Every figure of the book prints its smallest text legibly: at least 7 pt in the PDF and 6 px on a phone.

The chapter recipe (``book/_ext/execute_chapter.py``) stores, with every figure a cell draws, the font
size of the smallest text the figure draws (``lagtheory.palette.record_text_sizes``); the stored PNG
gives the figure's width. The PDF prints a figure wider than the text width (6.5 in) scaled down to it;
the HTML shows it on a 390 px phone scaled down to the column (``PHONE_COLUMN_PIXELS``, which
``tests/test_rendered_book.py`` measures in the browser, with the sizes as shown). This is the PDF log
check's companion for figures: LaTeX's log does not say how large a figure's text prints.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import nbformat
import pytest

from lagtheory import palette

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))

NOT_YET_LEGIBLE: dict[str, str] = {}
"""Chapters whose figures are still below a bound, with the reason (each xfails strictly: once legible,
the entry must go)."""


def png_width(data: str) -> int:
    """The width in pixels of a base64 PNG (its IHDR chunk)."""
    return int.from_bytes(base64.b64decode(data)[16:20], "big")


def figure_text_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """One line per figure of ``notebook`` whose smallest text prints below a bound, or whose size is not stored."""
    problems = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if "image/png" not in output.get("data", {}):
                continue
            points = output.get("metadata", {}).get("image/png", {}).get(palette.TEXT_SIZE_KEY)
            if points is None:
                problems.append(f"cell {index}: no text size stored with the figure (re-execute with the recipe)")
                continue
            width = png_width(output["data"]["image/png"])
            printed, phone = palette.shown_text_sizes(width, points)
            where = f"cell {index}: {width} px wide, smallest text {points:g} pt"
            if printed < palette.SMALLEST_PRINTED_POINTS:
                problems.append(f"{where}: prints at {printed:.1f} pt in the PDF")
            if phone < palette.SMALLEST_PHONE_PIXELS:
                problems.append(f"{where}: shows at {phone:.1f} px on a phone")
    return problems


def chapter_params() -> list:
    return [
        pytest.param(
            chapter,
            id=chapter.stem,
            marks=[pytest.mark.xfail(strict=True, reason=NOT_YET_LEGIBLE[chapter.stem])]
            if chapter.stem in NOT_YET_LEGIBLE
            else [],
        )
        for chapter in CHAPTERS
    ]


@pytest.mark.parametrize("chapter", chapter_params())
def test_every_figure_prints_its_text_legibly(chapter: Path) -> None:
    problems = figure_text_problems(nbformat.read(chapter, as_version=4))
    assert not problems, f"{chapter.name}:\n" + "\n".join(problems)


def test_the_sizes_are_computed_from_the_printed_and_shown_scales() -> None:
    """By hand: a 13.11 in figure (1311 px) with 10-pt text prints at 10 * 6.5 / 13.11 = 4.96 pt (the
    confirmatory chapter's figure before); on a phone it shows at 10 * 100/72 * 342 / 1311 = 3.62 px."""
    printed, phone = palette.shown_text_sizes(1311, 10.0)
    assert abs(printed - 4.958) < 1e-3 and abs(phone - 3.623) < 1e-3
    assert palette.shown_text_sizes(500, 9.0) == (9.0, 9.0 * 100 / 72 * 342 / 500)  # narrower than both


@pytest.mark.parametrize(("argument", "value"), [("width_pixels", 0), ("smallest_points", 0.0)])
def test_bad_sizes_are_refused(argument: str, value: float) -> None:
    arguments = {"width_pixels": 400, "smallest_points": 8.0, argument: value}
    with pytest.raises(ValueError, match=argument):
        palette.shown_text_sizes(**arguments)


def test_a_planted_figure_with_5_pt_text_fails(tmp_path: Path) -> None:
    """The whole path: a notebook executed with the chapter recipe stores each figure's smallest text (a
    figure shown by plt.show() inside a cell, and one left for the end of its cell); an 8 in figure whose title
    is 5 pt fails both bounds (5 pt even at its own size, about 3 px scaled to a phone), and a 4 in figure
    whose text is all 9 pt or more passes."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from execute_chapter import execute

    cells = [
        "import matplotlib.pyplot as plt",
        "fig, ax = plt.subplots(figsize=(8, 3))\n_ = ax.plot([0, 1], color='#000000')\n"
        "_ = ax.set_title('five points', fontsize=5)\nplt.show()",
        "fig, ax = plt.subplots(figsize=(4, 3))\n_ = ax.plot([0, 1], color='#000000')\n"
        "ax.tick_params(labelsize=9)\n_ = ax.set_title('nine points', fontsize=9)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "planted.ipynb"
    nbformat.write(notebook, path)
    executed = nbformat.reads(execute(path), as_version=4)
    problems = figure_text_problems(executed)
    assert len(problems) == 2, problems
    assert problems[0].startswith("cell 1:") and "smallest text 5 pt: prints at 4." in problems[0]
    assert problems[1].startswith("cell 1:") and "on a phone" in problems[1]
    (stored,) = [o for o in executed.cells[2].outputs if "image/png" in o.get("data", {})]
    assert stored.metadata["image/png"][palette.TEXT_SIZE_KEY] == 9.0


LEGEND_CALL = __import__("re").compile(r"\.legend\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def legends_without_a_place(text: str) -> list[str]:
    """The ``.legend(...)`` calls of ``text`` that give no ``loc``: matplotlib then places the legend itself and,
    where that search takes long (a slow or loaded machine), prints a warning into the cell's output, which the
    stored outputs would then hold on one machine and not on another."""
    return [call.group(0) for call in LEGEND_CALL.finditer(text) if "loc=" not in call.group(1)]


def test_every_legend_has_a_fixed_place() -> None:
    sources = [*sorted((ROOT / "book" / "text").glob("*.md")), *sorted((ROOT / "lagtheory").rglob("*.py"))]
    found = {str(p.relative_to(ROOT)): legends_without_a_place(p.read_text(encoding="utf-8")) for p in sources}
    assert {path: calls for path, calls in found.items() if calls} == {}


def test_a_legend_without_a_place_is_found() -> None:
    assert legends_without_a_place("_ = ax.legend()\n_ = ax.legend(fontsize=f(2))") == [
        ".legend()",
        ".legend(fontsize=f(2))",
    ]
    assert legends_without_a_place('ax.legend(fontsize=9, loc="upper right")') == []
