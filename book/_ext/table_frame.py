"""The frame of a docutils table (column widths, one header row, an empty body), shared by
the book's directives that build tables: {environment-table} (book_pages.py) and the table
of {claim-map} (claim_links.py)."""

from __future__ import annotations

from docutils import nodes

FRAMED = "framed-table"
"""The class of every table built here (book/_ext/latex_layout.py sets them with their widths in the PDF)."""


def table_frame(headers: list[str], widths: list[int], classes: list[str]) -> tuple[nodes.table, nodes.tbody]:
    """A table with the given header row and relative column widths; returns the table and
    its (empty) body, to which the caller appends rows."""
    if len(widths) != len(headers):
        raise ValueError(f"widths must give one width per header ({len(headers)}), got {len(widths)}")
    table = nodes.table(classes=[*classes, FRAMED])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    row = nodes.row()
    for header in headers:
        row += nodes.entry("", nodes.paragraph("", header))
    head += row
    group += head
    body = nodes.tbody()
    group += body
    return table, body
