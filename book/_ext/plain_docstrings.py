"""Sphinx extension of the lagtheory book: render the package's docstrings as
preformatted text on the API page.

The docstrings are written for readers of the source (formulas in plain text,
aligned blocks, the book's equation labels); shown verbatim they read the same
on the API page, and no docstring can break the warnings-as-errors build by
being invalid reStructuredText.
"""


def _as_literal_block(app, what, name, obj, options, lines):
    if any(line.strip() for line in lines):
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


def setup(app):
    """Register the docstring hook with Sphinx."""
    app.connect("autodoc-process-docstring", _as_literal_block)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
