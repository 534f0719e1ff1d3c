"""The bibliography labelled by author and year, as the chapters cite (``bibtex_default_style: author_year``).

The chapters cite author-year (``bibtex_reference_style: author_year``: "[Hahn, 2020]"), but pybtex's
formatting styles label the list by number ("[1]") or by letters ("[Hah20]"). This extension registers
the formatting style ``author_year``: pybtex's ``plain`` entries, sorted by author, year and title, each
labelled with the text its citations print: the authors as sphinxcontrib-bibtex's author-year citations
write them (one name; two joined by "and"; three or more as the first and "et al."), a comma, the year,
and a letter after the year where two entries would otherwise share a label (``tests/test_references.py``
builds a page and compares each citation with its entry's label).
"""

from __future__ import annotations

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.application import Sphinx
from sphinxcontrib.bibtex.style.referencing import PersonStyle

AUTHORS = PersonStyle(other=" et al.")
"""The persons as the citations name them (sphinxcontrib-bibtex's default person style; "et al." as text)."""


class AuthorYearLabels(BaseLabelStyle):
    """Labels "Authors, year" (see the module docstring)."""

    def format_labels(self, sorted_entries):
        labels = [self.format_label(entry) for entry in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + chr(ord("a") + seen[label])
                seen[label] += 1

    def format_label(self, entry) -> str:
        authors = AUTHORS.author_or_editor_or_title(full=False).format_data({"entry": entry, "style": self})
        return f"{authors.render_as('text')}, {entry.fields.get('year', 'n.d.')}"

    @property
    def person(self) -> PersonStyle:
        """The person style the ``names`` template reads from its data's ``style``."""
        return AUTHORS


class AuthorYearStyle(PlainStyle):
    """pybtex's ``plain`` entries, labelled by :class:`AuthorYearLabels`."""

    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)


def setup(app: Sphinx):
    """Nothing to connect: importing the module registers the style with pybtex."""
    return {"parallel_read_safe": True, "parallel_write_safe": True}
