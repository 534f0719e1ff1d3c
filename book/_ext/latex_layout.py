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
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx_proof.nodes import proof_node
from table_frame import FRAMED

PREFIX = "Proof. "


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


def setup(app: Sphinx):
    """Register the LaTeX layout with Sphinx."""
    app.connect("doctree-resolved", title_proofs)
    app.connect("doctree-resolved", link_exercise_references)
    app.connect("doctree-resolved", widths_for_framed_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
