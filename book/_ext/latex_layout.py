"""What the PDF (LaTeX builders) shows where the HTML's form does not carry over.

sphinx-proof writes a proof as an admonition without a title node and starts its first
paragraph with "Proof. "; Sphinx's LaTeX writer then opens ``sphinxadmonition`` with no
title argument, so every proof box in the PDF has an empty title bar and its first
token taken as the title. Here, for LaTeX only, that "Proof. " becomes the box's title.
The HTML is left as sphinx-proof writes it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx_proof.nodes import proof_node

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


def setup(app: Sphinx):
    """Register the LaTeX layout with Sphinx."""
    app.connect("doctree-resolved", title_proofs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
