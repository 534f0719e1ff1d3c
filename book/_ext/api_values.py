"""Sphinx extension of the lagtheory book: a module constant's value on the API page only when short.

autodoc writes a module-level constant with its value (``COLUMN = 88``). For the catalogues
(``lagtheory.languages.LANGUAGES``, ``tasks.languages.catalogue.TASKS``, a DFA such as
``CONTAINS_B_NOT_C``) that value is a repr of thousands of characters: in the HTML a signature
paragraph of several screens, in the PDF one unbreakable signature box 760 pt deep that ran
past the page foot (tests/pdf_log_check.py). Here a value is shown only if its repr fits the
printed column (:data:`MAX_VALUE`); the constant's docstring says what it holds.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.ext.autodoc import DataDocumenter
from sphinx.util.inspect import object_description

MAX_VALUE = 88
"""The longest repr shown as a constant's value (lagtheory.layout.COLUMN characters)."""


class ShortValueDataDocumenter(DataDocumenter):
    """autodoc's documenter of module data, leaving out a value whose repr is longer than MAX_VALUE."""

    def should_suppress_value_header(self) -> bool:
        if super().should_suppress_value_header():
            return True
        try:
            return len(object_description(self.object)) > MAX_VALUE
        except ValueError:
            return True


def setup(app: Sphinx):
    """Register the documenter with Sphinx (in place of autodoc's own for data)."""
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(ShortValueDataDocumenter, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
