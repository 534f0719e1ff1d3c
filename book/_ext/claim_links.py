"""Sphinx extension of the lagtheory book: statements linked to the cells that check them.

It reads the book's check markers with :func:`claims.read_claims` (the same
reader that ``tests/test_claims.py`` and the claim-map page use) once per build
and, on every page,

* gives each check cell (a code cell whose first line is ``# check[kind]: labels``)
  an anchor ``check-<chapter>-<n>`` and a visible line above it that says what it
  checks ("Check 3 · sympy · Lemma 2.1, Lemma 2.3"); its code is folded in the
  HTML (a toggle opens it), its output stays visible;
* puts a "Checked by" line under every statement (sphinx-proof directive with a
  label) that links to each of its check cells, wherever they are;
* provides the directive ``{claim-map}`` (the claim-map page): the graph of
  statements as an inline SVG whose nodes link to the statements and whose
  chips link to the check cells, drawn in the Lean blueprint's convention (shape:
  the statement's kind; border: a sympy check; fill: a check at instances, in floating
  point or certified), with its legend below it, and the same as a table; in the PDF the graph is a TikZ drawing of the
  same layout (``claim_graph.render_tikz``) with its legend as a paragraph;
* provides the directive ``{chapter-checks}`` (each chapter's "What this chapter
  verified"): a table, generated from the check markers, of the page's statements
  and experiments with links to every cell that checks them, so the closing list
  of a chapter cannot leave out a check the chapter has.

Links are made when references are resolved, so they work in the HTML and in the
PDF alike; statement numbers are sphinx-proof's.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from claim_graph import GraphNode, render_legend_svg, render_svg, render_tikz
from claims import CERTIFIED, CHECK_KINDS, CheckCell, ClaimMap, Statement, read_claims
from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.util import texescape
from sphinx.util.nodes import make_refnode
from table_frame import table_frame

STATUS_CLASS = {
    "certified": "certified",
    "sympy and numeric": "both",
    "numeric only": "numeric",
    "sympy only": "sympy",
    "none": "none",
}
STATUS_TEXT = {
    "certified": "certified at instances, and checked",
    "sympy and numeric": "sympy and numeric",
    "numeric only": "numeric only",
    "sympy only": "sympy only",
    "none": "no check (a definition)",
}


class checked_by(nodes.General, nodes.Element):
    """Placeholder under a statement, filled with links to its check cells when references resolve."""


class check_header(nodes.General, nodes.Element):
    """Placeholder above a check cell, filled with links to the statements it checks."""


class claim_map(nodes.General, nodes.Element):
    """Placeholder of the ``{claim-map}`` directive: graph (HTML only) and table."""


class chapter_checks(nodes.General, nodes.Element):
    """Placeholder of the ``{chapter-checks}`` directive: the page's statements and their check cells."""


class ChapterChecksDirective(Directive):
    """``{chapter-checks}``: a table of the statements of this page (and its experiment) with their checks."""

    has_content = False

    def run(self):
        # the page's own docname: in the PDF every page is resolved inside the root document
        return [chapter_checks(docname=self.state.document.settings.env.docname)]


class ClaimMapDirective(Directive):
    """``{claim-map}``: the book's statements as a linked graph and a table."""

    has_content = False

    def run(self):
        return [claim_map()]


def _claims(app: Sphinx) -> ClaimMap:
    return app.lagtheory_claims  # type: ignore[attr-defined]


def _docname(app: Sphinx, source: str) -> str:
    """The Sphinx docname of a file named relative to the book directory."""
    return (Path(app.config.claim_links_book_dir) / source).with_suffix("").as_posix()


def read_book_claims(app: Sphinx) -> None:
    """Read the claim map once per build, before any page is read."""
    app.lagtheory_claims = read_claims(Path(app.srcdir) / app.config.claim_links_book_dir)  # type: ignore[attr-defined]


def _fingerprint(claims: ClaimMap) -> str:
    parts = [repr(sorted((s.label, s.kind, s.source, sorted(s.cites)) for s in claims.statements.values()))]
    parts.append(repr(claims.check_cells))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def outdated_when_claims_change(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Re-read every page that shows claim links when a statement or a check moved."""
    claims = _claims(app)
    fingerprint = _fingerprint(claims)
    if getattr(env, "lagtheory_claims_fingerprint", None) == fingerprint:
        return []
    env.lagtheory_claims_fingerprint = fingerprint
    pages = {_docname(app, s.source) for s in claims.statements.values()}
    pages |= {_docname(app, c.source) for c in claims.check_cells}
    pages |= set(app.config.claim_links_map_pages)
    return sorted(p for p in pages if p in env.found_docs)


def mark_cells_and_statements(app: Sphinx, doctree: nodes.document) -> None:
    """Anchor, label and fold the page's check cells; put a placeholder under each statement."""
    claims = _claims(app)
    docname = app.env.docname
    cells = {c.cell: c for c in claims.check_cells if _docname(app, c.source) == docname}
    for container in list(doctree.findall(nodes.container)):
        if container.get("nb_element") != "cell_code" or container.get("cell_index") not in cells:
            continue
        cell = cells[container["cell_index"]]
        tags = container.get("cell_metadata", {}).get("tags", [])
        if not container.get("hide_mode") and "show-input" not in tags:
            container["hide_mode"] = "input"
            container["prompt_show"] = app.config.claim_links_prompt_show
            container["prompt_hide"] = app.config.claim_links_prompt_hide
        container["classes"].append("check-cell")
        container["check_notebook"] = str(app.env.doc2path(docname, base=False))
        parent = container.parent
        index = parent.index(container)
        parent.insert(index, check_header(anchor=cell.anchor, source=cell.source, cell=cell.cell))
        parent.insert(index, nodes.target("", "", ids=[cell.anchor]))
    for node in list(doctree.findall(nodes.Element)):
        label = node.get("label")
        if "realtype" in node and label in claims.statements:
            node.parent.insert(node.parent.index(node) + 1, checked_by(label=label))


def _statement_number(app: Sphinx, label: str) -> str:
    """'Lemma 2.1' as sphinx-proof numbers it (or 'Lemma' for an unnumbered one)."""
    env = app.env
    entry = env.proof_list[label]
    name = entry["realtype"].title()
    if entry["nonumber"]:
        return name
    number = env.toc_fignumbers.get(entry["docname"], {}).get(entry["countertype"], {}).get(label)
    return f"{name} {'.'.join(map(str, number))}" if number else name


def _chapter(app: Sphinx, docname: str) -> str:
    """'3 What attention must reach': the chapter's number (if numbered) and title."""
    number = app.env.toc_secnumbers.get(docname, {}).get("")
    title = app.env.titles[docname].astext()
    return f"{'.'.join(map(str, number))} {title}" if number else title


def _statement_ref(app: Sphinx, fromdocname: str, statement: Statement, text: str | None = None) -> nodes.Node:
    entry = app.env.proof_list[statement.label]
    child = nodes.inline("", text or _statement_number(app, statement.label), classes=["claim-statement-ref"])
    return make_refnode(
        app.builder, fromdocname, entry["docname"], statement.label, child, _plain_title(statement.title)
    )


def _where(app: Sphinx, fromdocname: str, todocname: str) -> str:
    if todocname == fromdocname:
        return "this chapter"
    number = app.env.toc_secnumbers.get(todocname, {}).get("")
    return f"ch. {'.'.join(map(str, number))}" if number else app.env.titles[todocname].astext()


def _check_links(app: Sphinx, fromdocname: str, cells: list[CheckCell], here: str = "this chapter") -> list[nodes.Node]:
    """'sympy checks 1, 7 and numeric check 2 (this chapter); numeric check 5 (ch. 4)', each number a link."""
    order = {doc: i for i, doc in enumerate(_reading_order(app))}
    by_doc: dict[str, list[CheckCell]] = {}
    for cell in cells:
        by_doc.setdefault(_docname(app, cell.source), []).append(cell)
    out: list[nodes.Node] = []
    for i, docname in enumerate(sorted(by_doc, key=lambda d: (d != fromdocname, order.get(d, len(order))))):
        if i:
            out.append(nodes.Text("; "))
        phrases = []
        for kind in CHECK_KINDS:
            numbered = sorted((c for c in by_doc[docname] if c.kind == kind), key=lambda c: c.number)
            if not numbered:
                continue
            phrase: list[nodes.Node] = [nodes.Text(f"{kind} check{'s' if len(numbered) > 1 else ''} ")]
            links = []
            for cell in numbered:
                child = nodes.inline("", str(cell.number), classes=["claim-check-ref", f"check-{cell.kind}"])
                tip = f"{kind} check {cell.number}, {_chapter(app, docname)}"
                links.append(make_refnode(app.builder, fromdocname, docname, cell.anchor, child, tip))
            phrase.extend(_join(links))
            phrases.append(phrase)
        for j, phrase in enumerate(phrases):
            if j:
                out.append(nodes.Text(" and "))
            out.extend(phrase)
        where = here if docname == fromdocname else _where(app, fromdocname, docname)
        out.append(nodes.Text(f" ({where})"))
    return out


def _join(items: list[nodes.Node], separator: str = ", ") -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for i, item in enumerate(items):
        if i:
            out.append(nodes.Text(separator))
        out.append(item)
    return out


def _checked_by_paragraph(app: Sphinx, fromdocname: str, statement: Statement) -> nodes.paragraph | None:
    if not statement.check_cells:
        return None
    paragraph = nodes.paragraph("", "", classes=["checked-by", f"status-{STATUS_CLASS[statement.status]}"])
    paragraph += nodes.strong("", "Checked by ")
    paragraph.extend(_check_links(app, fromdocname, statement.check_cells))
    return paragraph


def _check_header_paragraph(app: Sphinx, fromdocname: str, cell: CheckCell) -> nodes.paragraph:
    claims = _claims(app)
    paragraph = nodes.paragraph("", "", classes=["check-header", f"check-{cell.kind}"])
    paragraph += nodes.strong("", f"Check {cell.number}")
    kind = "certified (ball arithmetic)" if cell.kind == CERTIFIED else cell.kind
    paragraph += nodes.Text(f" · {kind} · ")
    targets: list[nodes.Node] = []
    for label in cell.labels:
        if label in claims.statements:
            targets.append(_statement_ref(app, fromdocname, claims.statements[label]))
        else:  # emp-...: an experiment, not a statement; its label is the authors' name, not the reader's
            numbered = bool(app.env.toc_secnumbers.get(fromdocname, {}).get(""))
            targets.append(nodes.emphasis("", f"the experiment of this {'chapter' if numbered else 'page'}"))
    paragraph.extend(_join(targets))
    return paragraph


def _ordered_statements(app: Sphinx) -> list[Statement]:
    """Statements in reading order: by chapter as the table of contents lists them, then as they appear."""
    order = {doc: i for i, doc in enumerate(_reading_order(app))}
    statements = list(_claims(app).statements.values())  # in the order the reader met them in each file

    def key(s: Statement):
        return (order.get(app.env.proof_list[s.label]["docname"], len(order)), statements.index(s))

    return sorted(statements, key=key)


def _reading_order(app: Sphinx) -> list[str]:
    """Docnames in the order of the table of contents (depth first from the root document)."""
    seen: list[str] = []

    def walk(doc: str) -> None:
        if doc in seen:
            return
        seen.append(doc)
        for child in app.env.toctree_includes.get(doc, []):
            walk(child)

    walk(app.config.root_doc)
    return seen


def _plain_title(title: str) -> str:
    """A statement's title without MyST markup: '$L$' -> 'L', '{math}`x`' -> 'x'."""
    title = re.sub(r"\{[a-z:]+\}`([^`]*)`", r"\1", title)
    return re.sub(r"\$+([^$]*)\$+", lambda m: m[1].replace("\\", ""), title)


def _claim_table(app: Sphinx, fromdocname: str, statements: list[Statement]) -> nodes.table:
    headers = ["Statement", "Checked by", "Check cells", "Its proof cites"]
    table, body = table_frame(headers, [30, 16, 36, 18], ["claim-table"])
    claims = _claims(app)
    chapter = None
    for s in statements:
        docname = app.env.proof_list[s.label]["docname"]
        if docname != chapter:
            chapter = docname
            heading = nodes.row(classes=["claim-table-chapter"])
            link = make_refnode(app.builder, fromdocname, docname, None, nodes.strong("", _chapter(app, docname)))
            heading += nodes.entry("", nodes.paragraph("", "", link), morecols=len(headers) - 1)
            body += heading
        row = nodes.row(ids=[f"claim-{s.label}"])
        first = nodes.paragraph("", "", _statement_ref(app, fromdocname, s))
        if s.title:
            first += nodes.Text(f" ({_plain_title(s.title)})")
        row += nodes.entry("", first)
        status = nodes.inline("", STATUS_TEXT[s.status], classes=["claim-status", f"status-{STATUS_CLASS[s.status]}"])
        row += nodes.entry("", nodes.paragraph("", "", status))
        cells = nodes.paragraph()
        cells.extend(_check_links(app, fromdocname, s.check_cells, here="its chapter") or [nodes.Text("none")])
        row += nodes.entry("", cells)
        cited = [claims.statements[c] for c in sorted(s.cites) if c in claims.statements]
        cites = _join([_statement_ref(app, fromdocname, c) for c in cited]) or [nodes.Text("-")]
        row += nodes.entry("", nodes.paragraph("", "", *cites))
        body += row
    return table


def _chapter_checks_table(app: Sphinx, fromdocname: str, page: str) -> nodes.table:
    """What ``page`` checks, generated from the check markers: the statements defined on it in reading
    order, each with its status and every cell that checks it (here or elsewhere); then the statements
    defined elsewhere that cells of this page check, with those cells; then one row for the page's own
    checks that name no statement (labels ``emp-...``: its experiment), if any."""
    claims = _claims(app)
    headers = ["Statement", "Checked by", "Check cells"]
    table, body = table_frame(headers, [40, 20, 40], ["claim-table", "chapter-checks"])
    on_page = [c for c in claims.check_cells if _docname(app, c.source) == page]

    def add_row(first: nodes.paragraph, status: nodes.Node, cells: list[CheckCell]) -> None:
        row = nodes.row()
        row += nodes.entry("", first)
        row += nodes.entry("", nodes.paragraph("", "", status))
        links = nodes.paragraph()
        links.extend(_check_links(app, fromdocname, cells) or [nodes.Text("none")])
        row += nodes.entry("", links)
        body.append(row)

    def status_of(s: Statement) -> nodes.Node:
        return nodes.inline("", STATUS_TEXT[s.status], classes=["claim-status", f"status-{STATUS_CLASS[s.status]}"])

    statements = _ordered_statements(app)
    for s in statements:
        if app.env.proof_list[s.label]["docname"] == page:
            first = nodes.paragraph("", "", _statement_ref(app, fromdocname, s))
            if s.title:
                first += nodes.Text(f" ({_plain_title(s.title)})")
            add_row(first, status_of(s), s.check_cells)
    for s in statements:
        here = [c for c in on_page if s.label in c.labels]
        if here and app.env.proof_list[s.label]["docname"] != page:
            first = nodes.paragraph("", "", _statement_ref(app, fromdocname, s))
            first += nodes.Text(f" ({_where(app, page, app.env.proof_list[s.label]['docname'])})")
            add_row(first, status_of(s), here)
    own = [c for c in on_page if not any(label in claims.statements for label in c.labels)]
    if own:
        numbered = bool(app.env.toc_secnumbers.get(page, {}).get(""))
        name = "The experiment of this chapter" if numbered else "The checks of this page"
        kinds = " and ".join(k for k in CHECK_KINDS if any(c.kind == k for c in own))
        add_row(nodes.paragraph("", "", nodes.emphasis("", name)), nodes.Text(f"{kinds} checks"), own)
    if len(body.children) == 0:
        raise ValueError(f"{page}: {{chapter-checks}} on a page with no statement and no check cell")
    return table


def _graph_nodes(app: Sphinx, fromdocname: str, statements: list[Statement]) -> list[GraphNode]:
    """The statements as the claim map draws them. Links are page-relative URIs in HTML, and
    LaTeX labels (``doc:anchor``, ``doc::doc`` for a chapter) in the PDF."""
    latex = app.builder.format == "latex"

    def uri(docname: str, anchor: str) -> str:
        if latex:
            return f"{docname}:{anchor}"
        if docname == fromdocname:
            return f"#{anchor}"
        return f"{app.builder.get_relative_uri(fromdocname, docname)}#{anchor}"

    def chapter_uri(docname: str) -> str:
        if latex:
            return f"{docname}::doc"
        return app.builder.get_relative_uri(fromdocname, docname) if docname != fromdocname else "#"

    graph_nodes = []
    for s in statements:
        docname = app.env.proof_list[s.label]["docname"]
        graph_nodes.append(
            GraphNode(
                label=s.label,
                name=_statement_number(app, s.label),
                title=_plain_title(s.title),
                column=_chapter(app, docname),
                column_href=chapter_uri(docname),
                kind=s.kind,
                href=uri(docname, s.label),
                checks=[
                    (
                        c.kind,
                        uri(_docname(app, c.source), c.anchor),
                        f"{c.kind} check {c.number}, {_chapter(app, _docname(app, c.source))}",
                    )
                    for c in sorted(s.check_cells, key=lambda c: (CHECK_KINDS.index(c.kind), c.source, c.number))
                ],
            )
        )
    return graph_nodes


LATEX_LEGEND = (
    "The claim map, in the convention of Lean blueprints. Shape, the statement's kind: square corners, a "
    "definition; slightly rounded corners, a lemma or a proposition; round ends, a theorem or a corollary. Border: thick "
    "and blue, checked symbolically (sympy); thin and grey, no sympy check. Fill: white, not checked at "
    "instances; sand, checked at instances in floating point (numeric runs); lilac, certified at instances "
    "(ball arithmetic) beside the other checks. Each small square under a statement's name is one check cell "
    "(blue sympy, brown numeric, purple certified); an arrow runs from a result to each statement whose proof "
    "cites it. Each name, title and square is a link."
)


def fill_placeholders(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """Replace the placeholders by links, now that every page's numbers and anchors are known."""
    claims = _claims(app)
    for node in list(doctree.findall(checked_by)):
        paragraph = _checked_by_paragraph(app, fromdocname, claims.statements[node["label"]])
        node.replace_self(paragraph or [])
    cells = {(c.source, c.cell): c for c in claims.check_cells}
    for node in list(doctree.findall(check_header)):
        node.replace_self(_check_header_paragraph(app, fromdocname, cells[(node["source"], node["cell"])]))
    for node in list(doctree.findall(claim_map)):
        statements = _ordered_statements(app)
        content: list[nodes.Node] = []
        if app.builder.format == "html":
            svg = render_svg(_graph_nodes(app, fromdocname, statements), claims.edges())
            legend = render_legend_svg()
            content.append(nodes.raw("", f'<div class="claim-graph">{svg}</div>\n{legend}', format="html"))
        elif app.builder.format == "latex":
            tikz = render_tikz(_graph_nodes(app, fromdocname, statements), claims.edges(), texescape.escape)
            content.append(nodes.raw("", tikz, format="latex"))
            content.append(nodes.paragraph("", "", nodes.emphasis("", LATEX_LEGEND)))
        content.append(_claim_table(app, fromdocname, statements))
        node.replace_self(content)
    for node in list(doctree.findall(chapter_checks)):
        node.replace_self(_chapter_checks_table(app, fromdocname, node["docname"]))


def print_checks_without_code(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    """In the PDF (LaTeX builders) a check cell shows its header and its output, not its code, which
    the HTML folds: the code is replaced by a line saying where to read it (the notebook and cell)."""
    if app.builder.format != "latex":
        return
    for container in list(doctree.findall(nodes.container)):
        if "check-cell" not in container["classes"]:
            continue
        for source in [c for c in container.children if c.get("nb_element") == "cell_code_source"]:
            where = f"{container.get('check_notebook')}, cell {container.get('cell_index')}"
            pointer = nodes.paragraph("", "", nodes.emphasis("", f"The check's code is in {where}."))
            pointer["classes"].append("check-code-pointer")
            source.replace_self(pointer)


def setup(app: Sphinx):
    """Register the claim links with Sphinx."""
    app.add_config_value("claim_links_book_dir", "book", "env")
    app.add_config_value("claim_links_map_pages", ["book/claim_map"], "env")
    app.add_config_value("claim_links_prompt_show", "Show the check's code", "env")
    app.add_config_value("claim_links_prompt_hide", "Hide the check's code", "env")
    app.add_directive("claim-map", ClaimMapDirective)
    app.add_directive("chapter-checks", ChapterChecksDirective)
    for node in (checked_by, check_header, claim_map, chapter_checks):
        app.add_node(node)
    app.connect("builder-inited", read_book_claims)
    app.connect("env-get-outdated", outdated_when_claims_change)
    app.connect("doctree-read", mark_cells_and_statements)
    app.connect("doctree-resolved", fill_placeholders)
    app.connect("doctree-resolved", print_checks_without_code)
    # env_version: doctrees read by an earlier version lack what this one stores on cells (check_notebook)
    return {"env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
