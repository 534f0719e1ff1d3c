"""Sphinx extension of the lagtheory book: the environment table, the PDF link, and the PDF's exercises.

* ``{environment-table}``: the Python and package versions the book was built
  with (every package pinned in ``requirements.txt``, its pin and the installed
  version side by side, and the build tools it pulls in), for the
  reproducibility page. It is computed at build time, so it always describes the
  build that produced the page.
* ``{book-pdf}``: a link to the PDF of the book when ``_build/latex/<name>.pdf``
  exists at build time (Sphinx copies it into the HTML output, under
  ``_downloads/``), otherwise a sentence saying how to build it. The page depends
  on that file, so the next HTML build after a PDF build picks it up.
* In the PDF (LaTeX builder) the solutions of the exercises are left out; the
  HTML keeps them, folded.
* In the PDF a chapter is numbered only where the HTML numbers it, so that
  chapter, statement, equation and figure numbers agree.
* The execution table (myst-nb's ``{nb-exec-table}``) says "succeeded" or
  "failed" in words instead of with an emoji that many fonts and LaTeX lack.
"""

from __future__ import annotations

import platform
import re
from importlib import metadata
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx_exercise.nodes import solution_node
from table_frame import table_frame

BUILD_TOOLS = ("sphinx", "myst-nb", "myst-parser", "sphinx-book-theme", "nbclient", "ipykernel", "docutils")
PDF_COMMAND = (
    "jupyter-book build . --builder pdflatex && python tests/pdf_log_check.py _build/latex/lagtheory.log"
    " && jupyter-book build . -W -n --keep-going"
)
"""The PDF's build as the README's third command runs it once TeX and the environment are there: the PDF,
its log check (``tests/pdf_log_check.py``), then the HTML that links it (``tests/test_pdf_command.py``)."""


def _pins(requirements: Path) -> list[tuple[str, str]]:
    """(name, pinned version) of every ``name==version`` line of a requirements file."""
    pins = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s#;]+)", line)
        if match:
            pins.append((match[1], match[2]))
    return pins


def _installed(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _table(headers: list[str], rows: list[list[str]], classes: list[str]) -> nodes.table:
    table, body = table_frame(headers, [1] * len(headers), classes)
    for values in rows:
        row = nodes.row()
        for value in values:
            version, _, note = value.partition(" (")
            paragraph = nodes.paragraph("", "", nodes.literal("", version))
            if note:
                paragraph += nodes.emphasis("", f" ({note}")
            row += nodes.entry("", paragraph)
        body += row
    return table


class EnvironmentTable(Directive):
    """``{environment-table}``: the versions this build ran with."""

    has_content = False

    def run(self):
        env = self.state.document.settings.env
        requirements = Path(env.srcdir) / "requirements.txt"
        env.note_dependency(str(requirements))
        system = [
            ["Python", f"{platform.python_implementation()} {platform.python_version()}"],
            ["platform", f"{platform.system()} {platform.release()} ({platform.machine()})"],
        ]
        pinned = []
        for name, pin in _pins(requirements):
            installed = _installed(name)
            same = installed.split("+")[0] == pin  # a local build label (torch's +cpu) is the same release
            pinned.append([name, pin, installed if same else f"{installed} (differs from the pin)"])
        tools = [[name, _installed(name)] for name in BUILD_TOOLS]
        return [
            _table(["", "version"], system, ["environment-table"]),
            nodes.paragraph("", "Packages pinned in requirements.txt, and the versions this build found:"),
            _table(["package", "pinned", "installed"], pinned, ["environment-table"]),
            nodes.paragraph("", "Build tools they pull in:"),
            _table(["package", "installed"], tools, ["environment-table"]),
        ]


class BookPdf(Directive):
    """``{book-pdf}``: a link to the PDF of the book, or how to build it."""

    has_content = False

    def run(self):
        env = self.state.document.settings.env
        app = env.app
        pdf = Path(app.outdir).parent / "latex" / f"{app.config.book_pdf_name}.pdf"
        inside = pdf.is_relative_to(env.srcdir)  # False only for a build with --path-output elsewhere
        relative = pdf.relative_to(env.srcdir).as_posix() if inside else ""
        if inside:  # re-read this page when the PDF appears or changes (a missing file counts as changed)
            env.note_dependency(relative)
        paragraph = nodes.paragraph("", "", classes=["book-pdf"])
        if inside and pdf.is_file():
            paragraph += nodes.Text("The whole book as one PDF (theorems, proofs and the cells' outputs without their ")
            paragraph += nodes.Text("code; exercises without their solutions): ")
            paragraph += addnodes.download_reference(
                "", "", nodes.literal("", pdf.name), reftarget=f"/{relative}", refdoc=env.docname, refexplicit=True
            )
            paragraph += nodes.Text(f" ({pdf.stat().st_size / 1e6:.1f} MB).")
        else:
            paragraph += nodes.Text("The PDF of the book is not part of this build. Build it (TeX needed, see the ")
            paragraph += nodes.Text("README) with ")
            paragraph += nodes.literal("", PDF_COMMAND)
            paragraph += nodes.Text("; the HTML then links it here.")
        only = addnodes.only(expr="html")  # the PDF does not link itself
        only += paragraph
        return [only]


def drop_solutions_from_pdf(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """The PDF prints the exercises without their solutions (the HTML keeps them, folded)."""
    if app.builder.format == "latex":
        for node in list(doctree.findall(solution_node)):
            node.parent.remove(node)


def number_chapters_as_in_html(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """In the PDF, number a chapter only where the HTML does (a part of _toc.yml with ``numbered: true``).

    LaTeX numbers every chapter; the HTML numbers the chapters of the numbered
    parts only, and the statements, equations and figures carry those numbers.
    So the PDF switches section numbering off (``secnumdepth`` -1: the chapter
    counter does not advance either) before each unnumbered stretch and on again
    before each numbered one, and its chapter numbers agree with the HTML's.
    """
    if app.builder.format != "latex":
        return

    def numbered(doc: str) -> bool:
        return bool(app.env.toc_secnumbers.get(doc))

    def switch(on: bool) -> nodes.raw:
        return nodes.raw("", f"\\setcounter{{secnumdepth}}{{{2 if on else -1}}}\n", format="latex")

    state = numbered(app.config.root_doc)
    doctree.insert(0, switch(state))
    for start in list(doctree.findall(addnodes.start_of_file)):
        if numbered(start["docname"]) != state:
            state = not state
            start.parent.insert(start.parent.index(start), switch(state))


STATUS_WORDS = {"\u2705": "succeeded", "\u274c": "failed"}


def status_in_words(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """myst-nb's execution table marks a run with an emoji, which many fonts (and LaTeX) lack: say it."""
    for table in doctree.findall(nodes.table):
        for text in list(table.findall(nodes.Text)):
            if text.astext() in STATUS_WORDS:
                text.parent.replace(text, nodes.Text(STATUS_WORDS[text.astext()]))


def setup(app: Sphinx):
    """Register the directives and the PDF's solution filter with Sphinx."""
    app.add_config_value("book_pdf_name", "lagtheory", "env")
    app.add_directive("environment-table", EnvironmentTable)
    app.add_directive("book-pdf", BookPdf)
    app.connect("doctree-resolved", drop_solutions_from_pdf)
    app.connect("doctree-resolved", status_in_words)
    app.connect("doctree-resolved", number_chapters_as_in_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
