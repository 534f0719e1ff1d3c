"""tests/pdf_log_check.py reads a LaTeX log as TeX writes it: wrapped at 79 characters."""

import pdf_log_check as P
import pytest

TEX = "\n".join(
    [
        r"\documentclass{sphinxmanual}",
        r"\label{\detokenize{book/setting::doc}}",
        "x",
        "x",
        r"\label{\detokenize{book/verdict::doc}}",
        "x",
    ]
)


def wrapped(text: str) -> str:
    """``text`` hard-wrapped as TeX writes its log (lines of exactly 79 characters run on)."""
    return "\n".join(text[i : i + P.WRAP] for i in range(0, len(text), P.WRAP))


def test_overfull_boxes_found_even_when_tex_wrapped_the_line():
    line = "Overfull \\hbox (1040.5pt too wide) in paragraph at lines 5--7" + " []" * 30
    log = "\n".join(
        ["This is pdfTeX", wrapped(line), "Overfull \\vbox (12.0pt too high) has occurred while \\output is active"]
    )
    boxes = P.overfull_boxes(log)
    assert [(b.kind, b.points, b.line) for b in boxes] == [("h", 1040.5, 5), ("v", 12.0, None)]


def test_a_wide_box_fails_and_is_placed_in_its_chapter():
    log = "Overfull \\hbox (51.2pt too wide) in alignment at lines 5--6\nOverfull \\hbox (0.8pt too wide) in paragraph at lines 3--3\n"
    lines, ok = P.report(log, TEX, max_points=3.0)
    assert not ok
    assert "over 50 pt: 1" in lines[0] and "over 3 pt: 1" in lines[0]
    assert any("51.2 pt at .tex line 5 book/verdict" in line for line in lines)
    assert P.report(log, TEX, max_points=60.0)[1]


def test_undefined_references_fail_named_or_only_summarised():
    named = "LaTeX Warning: Hyper reference `book/failures:ex-one' on page 12 undefined on input line 3.\n"
    lines, ok = P.report(named, TEX, max_points=3.0)
    assert not ok and any("book/failures:ex-one" in line and "book/setting" in line for line in lines)
    summary = "LaTeX Warning: There were undefined references.\n"
    assert not P.report(summary, TEX, max_points=3.0)[1]
    assert P.report("Output written on lagtheory.pdf (3 pages).\n", TEX, max_points=3.0)[1]


def test_a_warning_wrapped_over_two_log_lines_is_read_whole():
    warning = (
        "LaTeX Warning: Hyper reference `book/three_phase:prop-sampled-phases-long-label' on page 140 "
        "undefined on input line 5."
    )
    assert len(warning) > P.WRAP
    (found,) = P.undefined_references(wrapped(warning))
    assert (found.what, found.name, found.line) == (
        "hyper reference",
        "book/three_phase:prop-sampled-phases-long-label",
        5,
    )


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(SystemExit):
        P.main([str(tmp_path / "missing.log")])
    (tmp_path / "x.log").write_text("")
    with pytest.raises(SystemExit):
        P.main([str(tmp_path / "x.log"), "--max-overfull-pt", "-1"])


def test_boxes_in_the_index_and_contents_are_not_placed_in_a_chapter():
    """A box's line number counts lines of the file TeX is reading: the general index's boxes
    (lines of lagtheory.ind) were reported as book/setting's and book/intro's .tex lines."""
    log = "\n".join(
        [
            "(./lagtheory.toc [1]",
            "Overfull \\vbox (20.0pt too high) has occurred while \\output is active []",
            ") \\tf@toc=\\write6",
            "Overfull \\hbox (9.0pt too wide) in paragraph at lines 5--6",
            "(./lagtheory.ind",
            "Overfull \\hbox (95.6pt too wide) in paragraph at lines 2--4",
        ]
    )
    boxes = P.overfull_boxes(log)
    assert [(b.points, b.part) for b in boxes] == [(20.0, "table of contents"), (9.0, ""), (95.6, "index")]
    lines, ok = P.report(log, TEX, max_points=3.0)
    assert not ok
    assert any("95.6 pt at index, line 2" in line for line in lines)
    assert any("9.0 pt at .tex line 5 book/verdict" in line for line in lines)
    assert not any("95.6" in line and "book/" in line for line in lines)


CELL = r"\begin{sphinxuseclass}{cell}"
INPUT = r"\begin{sphinxuseclass}{cell_input}"
PYTHON = (
    "\\begin{sphinxVerbatim}[commandchars=\\\\\\{\\}]\n\\PYG{k+kn}{import} \\PYG{n+nn}{numpy}\n\\end{sphinxVerbatim}"
)
OUTPUT = "\\begin{sphinxVerbatim}[commandchars=\\\\\\{\\}]\nchecked: 3 \\PYGZlt{} 4\n\\end{sphinxVerbatim}"
CLEAN = "Output written on lagtheory.pdf (3 pages).\n"


def chapter_tex(*setting: str, verdict: tuple[str, ...] = (), contributing: tuple[str, ...] = ()) -> str:
    return "\n".join(
        [
            r"\label{\detokenize{book/setting::doc}}",
            *setting,
            r"\label{\detokenize{book/verdict::doc}}",
            *verdict,
            r"\label{\detokenize{book/contributing::doc}}",
            *contributing,
        ]
    )


def test_a_chapter_that_prints_a_cells_code_fails():
    tex = chapter_tex(CELL, OUTPUT, verdict=(CELL, INPUT, PYTHON))
    lines, ok = P.report(CLEAN, tex, max_points=3.0)
    assert not ok
    assert "source code printed in chapters: 1 blocks" in lines
    assert any("source code printed at .tex line 8 book/verdict" in line for line in lines)


def test_python_in_a_notebook_chapter_fails_even_outside_a_cell():
    lines, ok = P.report(CLEAN, chapter_tex(CELL, OUTPUT, PYTHON), max_points=3.0)
    assert not ok and any("book/setting" in line and "source code printed" in line for line in lines)


def test_outputs_and_the_contributing_guides_code_pass():
    """A cell's output is not code; a page about the book (no notebook cells) may show Python."""
    tex = chapter_tex(CELL, OUTPUT, verdict=(CELL, OUTPUT), contributing=(PYTHON,))
    lines, ok = P.report(CLEAN, tex, max_points=3.0)
    assert ok and "source code printed in chapters: 0 blocks" in lines


def test_a_float_too_large_for_its_page_fails_in_its_chapter():
    """A figure and its caption taller than the page: LaTeX only warns, and the caption runs into the
    page's foot (the languages chapter's heat maps, 42 pt too tall)."""
    log = "LaTeX Warning: Float too large for page by 42.33018pt on input line 6.\n"
    lines, ok = P.report(log, TEX, max_points=3.0)
    assert not ok
    assert "floats too large for a page: 1" in lines
    assert any("float too large by 42.3 pt at .tex line 6 book/verdict" in line for line in lines)
