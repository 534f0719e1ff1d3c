"""lagtheory.layout: printed lines that fit the column, and table text that renders as written."""

import re

import pytest
from markdown_it import MarkdownIt

from lagtheory.layout import COLUMN, markdown_text, print_wrapped, table_with_widths, wrap

LONG = (
    "324 of 625 runs recognise up to 1e12; 2 disagree with the boundary (5.3), all in cells the curve crosses; "
    "max relative gap of t1 to (5.2) over the grid < 1e-10"
)


def _words(text: str) -> list[str]:
    return text.split()


def test_short_lines_are_left_alone():
    text = "a = 1\n    indented, and kept: exactly"
    assert wrap(text) == text


def test_a_long_line_breaks_at_semicolons_first_and_keeps_every_word():
    lines = wrap(LONG).split("\n")
    assert all(len(line) <= COLUMN for line in lines), lines
    assert lines[0].endswith(";") and lines[1].startswith("    ")
    assert _words(wrap(LONG)) == _words(LONG)


def test_brackets_are_not_split_when_a_break_outside_exists():
    line = "Geometric(mean=10) u = (-1.0, 3.0): truncation length N = 273, tail bounded, loss = 0.56229514, more text"
    wrapped = wrap(line, width=60)
    assert "(-1.0, 3.0)" in wrapped and "(mean=10)" in wrapped
    assert all(len(part) <= 60 for part in wrapped.split("\n"))
    assert _words(wrapped) == _words(line)


def test_continuation_keeps_the_lines_own_indent():
    line = "  " + "; ".join(f"item {i} = {i / 7:.6f}" for i in range(12))
    lines = wrap(line, width=50).split("\n")
    assert lines[0].startswith("  item 0") and all(part.startswith("      ") for part in lines[1:])
    assert all(len(part) <= 50 for part in lines)


def test_a_line_without_a_break_point_stays_whole():
    word = "x" * 120
    assert wrap(word) == word


@pytest.mark.parametrize(
    ("width", "indent", "message"), [(10, 4, "width must be at least 20"), (40, 30, "indent must be in 0..20")]
)
def test_bad_arguments_are_named(width, indent, message):
    with pytest.raises(ValueError, match=message):
        wrap("text", width=width, indent=indent)


def test_print_wrapped_prints_the_wrapped_text(capsys):
    print_wrapped("a:", LONG)
    assert capsys.readouterr().out == wrap("a: " + LONG) + "\n"


@pytest.mark.parametrize(
    "name",
    [
        "(0.3, 10) base*0.316, (0.3, 1) base*3.16",
        "budget T*2",
        "a_b_c and _x_",
        r"back\slash",
        "a | b",
        "[x](y) <b> `c` #1 ~s~ !",
    ],
)
def test_markdown_text_renders_as_written(name):
    """Rendered by a CommonMark parser with tables (markdown-it, as MyST uses), the cell shows ``name``."""
    html = MarkdownIt("commonmark").enable("table").render(f"| cell |\n|---|\n| {markdown_text(name)} |\n")
    cell = re.search(r"<td>(.*)</td>", html, re.S).group(1)
    assert "<" not in cell.replace("&lt;", "")  # no element: no emphasis, code or link
    shown = cell.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"')
    assert shown == name


def test_table_with_widths_wraps_a_table_in_a_table_directive():
    lines = ["| a | b |", "|---|---|", "| 1 | x*y |"]
    assert table_with_widths(lines, [30, 70]).split("\n") == ["````{table}", ":widths: 30 70", "", *lines, "````"]
    with pytest.raises(ValueError, match="widths must be 2 positive numbers"):
        table_with_widths(lines, [30, 30, 40])
    with pytest.raises(ValueError, match="widths must be 2 positive numbers"):
        table_with_widths(lines, [0, 100])
