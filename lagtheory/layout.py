"""How the book lays out what a cell prints, so that a reader sees all of it without scrolling.

Two jobs, both about text the book's cells generate (the numbers in it are formatted
by :mod:`lagtheory.reporting`):

* :func:`wrap` breaks printed lines longer than the content column: at ``"; "`` first,
  then at ``", "``, ``": "`` or a space, never inside brackets when avoidable
  (``(0.0, 3.0)`` stays whole), continuation lines indented. :data:`COLUMN` is the
  width of a printed output at 1400 px in the built HTML (784 px, 14 px monospace:
  89 characters; ``tests/browser_check.py`` fails a page whose output scrolls).
* :func:`markdown_text` escapes generated text for a Markdown table cell, so that a
  name such as ``base*0.316`` or ``T*2`` shows as written and is not read as emphasis;
  :func:`table_with_widths` gives a generated Markdown table relative column widths, so
  that the PDF wraps its columns (without them LaTeX sets a long table's every column on
  one line, past the page edge).
"""

from __future__ import annotations

import re

COLUMN = 88
"""Characters of a printed line that fit the content column of the HTML book at 1400 px."""

_SEPARATORS = (("; ", 0), (", ", 1), (": ", 1), (" ", 2))
_OPEN, _CLOSE = "([{", ")]}"
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>|#~!])")


def _break_points(line: str) -> list[tuple[int, int, int]]:
    """(position after the separator, rank, bracket depth) for every place the line may break."""
    points, depth = [], 0
    for i, char in enumerate(line):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        for separator, rank in _SEPARATORS:
            if line.startswith(separator, i):
                points.append((i + len(separator), rank, depth))
                break
    return points


def _split(line: str, width: int) -> tuple[str, str]:
    """The longest good first piece of ``line`` that fits ``width`` (or the shortest possible), and the rest."""
    indent = len(line) - len(line.lstrip(" "))
    points = [p for p in _break_points(line) if p[0] > indent + 1]
    if not points:
        return line, ""
    shallowest = min(depth for _, _, depth in points)
    points = [p for p in points if p[2] == shallowest]
    fitting = [p for p in points if len(line[: p[0]].rstrip()) <= width]
    if not fitting:
        position = points[0][0]
    else:
        long_enough = [p for p in fitting if p[0] >= 0.4 * width] or fitting
        best = min(rank for _, rank, _ in long_enough)
        position = max(p[0] for p in long_enough if p[1] == best)
    return line[:position].rstrip(), line[position:].lstrip(" ")


def wrap(text: str, width: int = COLUMN, indent: int = 4) -> str:
    """``text`` with every line longer than ``width`` broken (see the module docstring).

    A continuation line starts ``indent`` spaces further in than the line it continues.
    Lines that fit are left as they are; a line with no place to break stays whole.

    Parameters
    ----------
    text : str
        The printed text, possibly several lines.
    width : int, optional
        The longest line, at least 20 characters (default :data:`COLUMN`).
    indent : int, optional
        The extra indentation of continuation lines, in 0..width // 2.

    Returns
    -------
    str
        The wrapped text.

    Raises
    ------
    ValueError
        If ``width`` or ``indent`` is out of range.
    """
    if width < 20:
        raise ValueError(f"width must be at least 20 characters, got {width}")
    if indent < 0 or indent > width // 2:
        raise ValueError(f"indent must be in 0..{width // 2}, got {indent}")
    out = []
    for line in text.split("\n"):
        prefix = " " * (len(line) - len(line.lstrip(" ")) + indent)
        while len(line) > width:
            first, rest = _split(line, width)
            if not rest:
                break
            out.append(first)
            line = prefix + rest
        out.append(line)
    return "\n".join(out)


def print_wrapped(*values: object, sep: str = " ", width: int = COLUMN) -> None:
    """``print(*values, sep=sep)``, its lines wrapped to ``width`` by :func:`wrap`.

    Parameters
    ----------
    *values : object
        What is printed, each by ``str``.
    sep : str, optional
        The separator between values.
    width : int, optional
        The longest line, at least 20 characters (default :data:`COLUMN`).

    Raises
    ------
    ValueError
        If ``width`` is out of range.
    """
    print(wrap(sep.join(str(value) for value in values), width))


def markdown_text(text: str) -> str:
    r"""``text`` for a Markdown table cell: every character Markdown would read as markup escaped.

    ``markdown_text("(0.3, 1) base*3.16")`` -> ``"(0.3, 1) base\\*3.16"``; a ``|`` cannot end
    the cell, a ``_`` or ``*`` starts no emphasis, a backslash stays a backslash.

    Parameters
    ----------
    text : str
        Generated text.

    Returns
    -------
    str
        The escaped text.
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def table_with_widths(lines: list[str], widths: list[int]) -> str:
    """The Markdown table ``lines`` (header, separator, rows) as a MyST ``table`` directive with
    relative column ``widths``, one per column of the header, set in the PDF as a ``longtable``
    (a table that may break across pages: a tall one otherwise runs past the page's foot).

    Parameters
    ----------
    lines : list of str
        The Markdown table: header, separator, rows.
    widths : list of int
        Relative column widths, positive, one per column of the header.

    Returns
    -------
    str
        The ``table`` directive.

    Raises
    ------
    ValueError
        If ``widths`` does not give one positive width per column.
    """
    columns = len(lines[0].strip().strip("|").split("|")) if lines else 0
    if len(widths) != columns or any(w <= 0 for w in widths):
        raise ValueError(f"widths must be {columns} positive numbers, one per column, got {widths}")
    return "\n".join(["````{table}", f":widths: {' '.join(map(str, widths))}", ":class: longtable", "", *lines, "````"])
