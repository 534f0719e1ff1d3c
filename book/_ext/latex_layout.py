r"""What the PDF (LaTeX builders) shows where the HTML's form does not carry over.

sphinx-proof writes a proof as an admonition without a title node and starts its first
paragraph with "Proof. "; Sphinx's LaTeX writer then opens ``sphinxadmonition`` with no
title argument, so every proof box in the PDF has an empty title bar and its first
token taken as the title. Here, for LaTeX only, that "Proof. " becomes the box's title.

sphinx-exercise labels an exercise in LaTeX as ``exercise:<label>`` only, so a ``{ref}`` or
``{numref}`` to an exercise (Sphinx writes ``\hyperref[<doc>:<label>]{Exercise \ref{...}}``)
is undefined in the PDF. Here such a reference is written as a link to ``exercise:<label>``
with the exercise's number as text, as the HTML shows it.
The tables the book's directives build (``table_frame``: the claim map's table, each chapter's
"What this chapter verified" table, the environment table) carry relative column widths;
Sphinx's LaTeX writer uses them only for a table marked ``colwidths-given``, and otherwise
sets an automatic ``tabulary`` that squeezes a column below its longest word ("Proposition")
and cannot break across pages. Here, for LaTeX only, such a table is marked so, and set as
a ``longtable``. The HTML is left as sphinx-proof, sphinx-exercise and ``table_frame`` write it.

What a reader of the printed book does not need leaves the PDF:

* the code of the notebooks' cells (a check cell's code is replaced by a pointer to its cell,
  ``claim_links.py``; every other cell prints its outputs only);
* what a click does in the HTML: the sentence above each chapter's table of checks says "each number
  opens the cell" (in the HTML a number unfolds the check cell's code); in the PDF, where nothing
  opens, it says where the number leads (:data:`HTML_ONLY_PHRASES`);
* the API reference's pages (the docstrings, signatures and members of every module; the index
  page keeps its overview tables and says where the reference is).

A long hexadecimal digest in inline code (the registration's SHA-256 hashes: 64 characters, wider
than the text is long with the words before them) has no place where LaTeX may break it, and
ran up to 79 pt into the margin; in the PDF it may break after every 8 characters (the HTML and the
sources are untouched, the registered sections' text too).

And what it needs is laid out for print: each part of ``_toc.yml`` (Foundations, Theory, ...)
opens with ``\bookpart`` (``book/latex/booklayout.sty``: an entry in the contents and the
page heads, no page of its own); the introduction is one chapter whose sections are the
root page's sections (they would otherwise be five short chapters, each on new pages); and a
statement or an exercise is set in one unbreakable box, so it never breaks after its first line.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node
from sphinx_proof.nodes import proof_node
from table_frame import FRAMED

PREFIX = "Proof. "

HTML_ONLY_PHRASES = {
    "(each number opens the cell)": "(each number links to the check cell, where its output is printed)",
}
"""Phrases of the chapters that describe what a click does in the HTML, and what the PDF says instead
(matched with runs of white space as one space)."""


def title_proofs(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Give each proof box of the LaTeX output the title "Proof" (see the module docstring)."""
    if app.builder.format != "latex":
        return
    for proof in doctree.findall(proof_node):
        for box in proof.findall(nodes.admonition):
            if box.children and isinstance(box.children[0], nodes.title):
                continue
            first = next(box.findall(nodes.Text), None)
            if first is None or not first.astext().startswith(PREFIX):
                continue
            first.parent.replace(first, nodes.Text(first.astext().removeprefix(PREFIX)))
            box.insert(0, nodes.title("", "Proof"))


def link_exercise_references(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Write each reference to an exercise as a link to sphinx-exercise's LaTeX label, numbered
    as in the HTML (see the module docstring)."""
    if app.builder.format != "latex":
        return
    env = app.env
    registry = getattr(env, "sphinx_exercise_registry", {})
    for reference in list(doctree.findall(addnodes.number_reference)):
        target = reference.get("refid") or reference.get("refuri", "").rpartition("#")[2]
        if target not in registry:
            continue
        number = env.toc_fignumbers.get(registry[target]["docname"], {}).get("exercise", {}).get(target)
        if not number:
            continue
        title = reference.get("title", "%s")
        text = title.replace("{number}", "%s").replace("%s", ".".join(map(str, number)))
        reference.replace_self(nodes.raw("", rf"\hyperref[exercise:{target}]{{{text}}}", format="latex"))


def widths_for_framed_tables(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Set each table built by ``table_frame`` with its column widths, as a longtable (see the
    module docstring)."""
    if app.builder.format != "latex":
        return
    for table in doctree.findall(nodes.table):
        if FRAMED in table["classes"]:
            table["classes"] += [c for c in ("colwidths-given", "longtable") if c not in table["classes"]]


def print_outputs_only(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Leave the code of every notebook cell out of the PDF; its outputs stay (see the module docstring).
    A check cell's code is already a pointer to the notebook (``claim_links.print_checks_without_code``)."""
    if app.builder.format != "latex":
        return
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code" or "check-cell" in cell["classes"]:
            continue
        for source in [c for c in cell.children if c.get("nb_element") == "cell_code_source"]:
            cell.remove(source)
        if not cell.children:
            cell.parent.remove(cell)


def _docname(node: nodes.Node, root: str) -> str:
    """The source document of a node of the assembled PDF: that of its nearest section or
    ``start_of_file`` (Sphinx marks every inlined section with its ``docname``; the parent links of
    an inlined document's top-level nodes still point into its own tree), else the root."""
    while node is not None:
        if isinstance(node, addnodes.start_of_file) or (isinstance(node, nodes.section) and "docname" in node):
            return node["docname"]
        node = node.parent
    return root


def _own_ids(section: nodes.section) -> list[str]:
    """The ids of a section and of its own content: not of its subsections, nor of documents it inlines."""
    found: list[str] = list(section["ids"])
    stack = [child for child in section.children if isinstance(child, nodes.Element)]
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.section | addnodes.start_of_file):
            continue
        found += node.get("ids", [])
        stack += [child for child in node.children if isinstance(child, nodes.Element)]
    return found


def api_reference_in_html_only(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Leave the API reference out of the PDF: every section that documents a module (autodoc's
    ``module-<name>`` target in its own content), then every page it leaves without a table (the pages
    of the reference; the index page keeps its overview tables, and says where the reference is in an
    ``{only} latex`` paragraph). A link into what left becomes its text (see the module docstring)."""
    if app.builder.format != "latex":
        return
    # the module's target id, which docutils may have moved to the node after it
    modules = [s for s in doctree.findall(nodes.section) if any(a.startswith("module-") for a in _own_ids(s))]
    gone = {
        (_docname(section, fromdocname), anchor)
        for section in modules
        for node in [section, *section.findall(nodes.Element)]
        for anchor in node.get("ids", [])
    }
    pages = {_docname(section, fromdocname) for section in modules}
    for section in modules:
        if section.parent is not None:  # else inside a section already left out
            section.parent.remove(section)
    emptied = set()
    for start in list(doctree.findall(addnodes.start_of_file)):
        if start["docname"] in pages and not next(start.findall(nodes.table), None):
            start.parent.remove(start)
            emptied.add(start["docname"])
    for reference in list(doctree.findall(nodes.reference)):
        if "refid" in reference:
            target = (_docname(reference, fromdocname), reference["refid"])
        else:
            target = tuple(reference.get("refuri", "").removeprefix("%").partition("#")[::2])
        if target in gone or target[0] in emptied:
            reference.replace_self(reference.children)


def parts_in_contents_and_heads(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    r"""Open each part of ``_toc.yml`` with ``\bookpart{caption}`` before its first chapter (see the
    module docstring)."""
    if app.builder.format != "latex":
        return
    site_map = getattr(app.env, "external_site_map", None)  # sphinx-external-toc's reading of _toc.yml
    if site_map is None:
        return
    first_of_part = {
        str(tree.items[0]): tree.caption for tree in site_map[site_map.root.docname].subtrees if tree.items
    }
    for start in list(doctree.findall(addnodes.start_of_file)):
        caption = first_of_part.get(start["docname"])
        if caption:
            start.parent.insert(start.parent.index(start), nodes.raw("", f"\\bookpart{{{caption}}}\n", format="latex"))


INTRODUCTION = "Introduction"


def introduction_as_one_chapter(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Set the root page (its opening paragraphs and sections) as one chapter, "Introduction", whose
    sections are the page's sections (see the module docstring)."""
    if app.builder.format != "latex":
        return
    top = next(iter(doctree.findall(nodes.section)), None)
    if top is None:
        return
    opening = [  # after the page's title, all but the chapters its table of contents inlined
        child
        for child in top.children[1:]
        if not isinstance(child, addnodes.start_of_file) and not next(child.findall(addnodes.start_of_file), None)
    ]
    if not opening:
        return
    chapter = nodes.section("", nodes.title("", INTRODUCTION), ids=["pdf-introduction"], names=["pdf-introduction"])
    top.insert(top.index(opening[0]), chapter)
    for child in opening:
        top.remove(child)
        chapter.append(child)


def statements_kept_together(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Set each statement (sphinx-proof's theorem, lemma, definition, ... but not a proof) and each
    exercise in ``bookstatement``, an unbreakable box (``booklayout.sty``; see the module docstring)."""
    if app.builder.format != "latex":
        return
    kept = [
        node
        for node in doctree.findall(nodes.Element)
        if isinstance(node, exercise_enumerable_node | exercise_node)
        or (
            type(node).__module__ == proof_node.__module__
            and isinstance(node, nodes.Admonition)
            and not isinstance(node, proof_node)
        )
    ]
    for node in kept:
        parent = node.parent
        parent.insert(parent.index(node), nodes.raw("", "\\begin{bookstatement}\n", format="latex"))
        parent.insert(parent.index(node) + 1, nodes.raw("", "\\end{bookstatement}\n", format="latex"))


def printed_phrases(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """In the PDF, say what a number does in print where the chapter says what a click does in the HTML
    (:data:`HTML_ONLY_PHRASES`): a paragraph of plain text holding such a phrase is rewritten."""
    if app.builder.format != "latex":
        return
    for paragraph in list(doctree.findall(nodes.paragraph)):
        text = " ".join(paragraph.astext().split())
        rewritten = text
        for phrase, printed in HTML_ONLY_PHRASES.items():
            rewritten = rewritten.replace(phrase, printed)
        if rewritten != text and all(isinstance(child, nodes.Text) for child in paragraph.children):
            paragraph.children = []
            paragraph += nodes.Text(rewritten)


DIGEST = re.compile(r"[0-9a-f]{32,}")
"""Inline code that is a hexadecimal digest (a SHA-256 is 64 characters), set breakable in the PDF."""
DIGEST_CHUNK = 8


def breakable_digests(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    r"""In the PDF, let a hexadecimal digest in inline code (:data:`DIGEST`) break after every
    :data:`DIGEST_CHUNK` characters: it is written as the inline code Sphinx writes, with ``\allowbreak``
    between the chunks."""
    if app.builder.format != "latex":
        return
    for literal in list(doctree.findall(nodes.literal)):
        text = literal.astext()
        if DIGEST.fullmatch(text):
            chunks = [text[i : i + DIGEST_CHUNK] for i in range(0, len(text), DIGEST_CHUNK)]
            code = "\\sphinxcode{\\sphinxupquote{" + "\\allowbreak{}".join(chunks) + "}}"
            literal.replace_self(nodes.raw("", code, format="latex"))


def setup(app: Sphinx):
    """Register the LaTeX layout with Sphinx."""
    app.connect("doctree-resolved", title_proofs)
    app.connect("doctree-resolved", link_exercise_references)
    app.connect("doctree-resolved", widths_for_framed_tables)
    app.connect("doctree-resolved", print_outputs_only)
    app.connect("doctree-resolved", api_reference_in_html_only)
    app.connect("doctree-resolved", introduction_as_one_chapter)
    app.connect("doctree-resolved", parts_in_contents_and_heads)
    app.connect("doctree-resolved", statements_kept_together)
    app.connect("doctree-resolved", printed_phrases)
    app.connect("doctree-resolved", breakable_digests)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
