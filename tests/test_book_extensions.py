"""The Sphinx extensions of book/_ext (claim_links, book_pages) on a tiny book built with Sphinx.

The tiny book has three notebooks (not executed: their outputs are stored) with
two statements, a citation between their proofs and five check cells (one of them
an experiment's), the generated table of a chapter's checks, an exercise with its
solution, a claim-map page and a reproducibility page. The
built HTML must carry the anchors, the "Checked by" lines, the check cells'
headers and folding, the graph and table of the claim map, with every link
pointing at an anchor that exists, the environment table, and the PDF link
once a PDF exists; the LaTeX must print the exercise without its solution, and the
check cells without their code.
"""

import json
import re
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace

EXT = Path(__file__).resolve().parents[1] / "book" / "_ext"


def notebook(cells):
    def cell(kind, text):
        if kind == "code":
            return {
                "cell_type": "code",
                "source": text,
                "metadata": {},
                "execution_count": 1,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "checked\n"}],
            }
        return {"cell_type": kind, "source": text, "metadata": {}}

    return json.dumps(
        {
            "cells": [{"id": f"cell-{i}", **cell(kind, text)} for i, (kind, text) in enumerate(cells)],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@pytest.fixture(scope="module")
def built(source):
    return build(source, "html")


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    src = tmp_path_factory.mktemp("tiny")
    (src / "index.md").write_text(
        "# Tiny\n\nThe opening.\n\n```{toctree}\n:numbered:\none\ntwo\nmap\nrepro\nthree\napi\napi_frames\n```\n\n"
        "## An aside\n\nIts text.\n"
    )
    (src / "one.ipynb").write_text(
        notebook(
            [
                (
                    "markdown",
                    "# One\n\n```{prf:lemma} Small\n:label: lem-small\nA lemma.\n```\n```{prf:proof}\nClear.\n```\n",
                ),
                ("code", "# check[sympy]: lem-small\nprint('checked')"),
                ("code", "x = 1"),
                ("code", "# check[numeric]: lem-small, thm-big\nprint('checked')"),
                ("markdown", "## What this chapter verified\n\n```{chapter-checks}\n```\n"),
            ]
        )
    )
    (src / "two.ipynb").write_text(
        notebook(
            [
                (
                    "markdown",
                    "# Two\n\n```{prf:theorem} Big $L$\n:label: thm-big\nA theorem.\n```\n"
                    "```{prf:proof}\nBy {prf:ref}`lem-small`.\n```\n",
                ),
                ("code", "# check[sympy]: thm-big\nprint('checked')"),
                ("code", "# check[certified]: thm-big\nprint('checked')"),
                ("markdown", "## What this chapter verified\n\n```{chapter-checks}\n```\n"),
            ]
        )
    )
    (src / "three.ipynb").write_text(
        notebook(
            [
                ("markdown", "# Three\n\nAn experiment.\n"),
                ("code", "# check[numeric]: emp-three\nprint('checked')"),
                ("markdown", "## What this chapter verified\n\n```{chapter-checks}\n```\n"),
            ]
        )
    )
    (src / "map.md").write_text(
        "# Map\n\n```{claim-map}\n```\n\nAs {ref}`ex-one` asks.\n\n"
        "Tables come from {py:func}`table_frame.table_frame`.\n"
    )
    (src / "api.md").write_text(
        "# API\n\nWhat each module holds.\n\n| module | holds |\n| --- | --- |\n| `table_frame` | frames |\n\n"
        "```{only} latex\nThe reference is in the HTML.\n```\n\n"
        "## Its own module\n\n```{eval-rst}\n.. automodule:: claims\n   :members: CheckCell\n```\n"
    )
    (src / "api_frames.md").write_text(
        "# Frames\n\nTables.\n\n## `table_frame`\n\n```{eval-rst}\n.. automodule:: table_frame\n   :members:\n```\n"
    )
    (src / "repro.md").write_text(
        "# Reproducibility\n\nThe registered hash: `1880aeda8ae751cd14fd453b965f6a14f7f55eeb764925d78bc825acc05da58e`.\n\n"
        "```{environment-table}\n```\n\n```{book-pdf}\n```\n\n"
        "```{exercise}\n:label: ex-one\nShow it.\n```\n```{solution} ex-one\nThe secret solution.\n```\n"
    )
    (src / "requirements.txt").write_text("numpy==0.0.1  # a pin no environment has\nsphinx==7.4.7\n")
    return src


def build(src: Path, builder: str) -> Path:
    out = src / "_build"
    with docutils_namespace():  # each build registers its nodes afresh, as sphinx-build does
        app = Sphinx(
            srcdir=str(src),
            confdir=None,
            outdir=str(out / builder),
            doctreedir=str(out / ".doctrees"),
            buildername=builder,
            warningiserror=True,
            status=None,
            confoverrides={
                "extensions": [
                    "myst_nb",
                    "sphinx_proof",
                    "sphinx_exercise",
                    "claim_links",
                    "book_pages",
                    "latex_layout",
                    "sphinx.ext.autodoc",
                ],
                "nb_execution_mode": "off",
                "claim_links_book_dir": ".",
                "claim_links_map_pages": ["map"],
                "exclude_patterns": ["_build"],
            },
        )
        app.build()
    return out / builder


def ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_check_cells_are_anchored_labelled_and_folded(built):
    one = (built / "one.html").read_text()
    assert {"check-one-1", "check-one-2"} <= ids(one)
    headers = re.findall(r'<p class="check-header[^"]*">(.*?)</p>', one, re.S)
    assert len(headers) == 2
    assert "Check 1" in headers[0] and "sympy" in headers[0] and 'href="#lem-small"' in headers[0]
    assert "Check 2" in headers[1] and 'href="two.html#thm-big"' in headers[1]
    assert one.count("Show the check&#x27;s code") + one.count("Show the check's code") == 2  # x = 1 stays open


def test_statements_say_what_checks_them(built):
    one = (built / "one.html").read_text()
    two = (built / "two.html").read_text()
    (line,) = re.findall(r'<p class="checked-by[^"]*">(.*?)</p>', one, re.S)
    assert 'href="#check-one-1"' in line and 'href="#check-one-2"' in line
    (line,) = re.findall(r'<p class="checked-by[^"]*">(.*?)</p>', two, re.S)
    assert 'href="#check-two-1"' in line and 'href="one.html#check-one-2"' in line


def test_claim_map_links_to_statements_and_check_cells(built):
    page = (built / "map.html").read_text()
    svg = page[page.index("<svg") : page.index("</svg>")]
    hrefs = re.findall(r'href="([^"]+)"', svg)
    assert "one.html#lem-small" in hrefs and "two.html#thm-big" in hrefs
    assert {"one.html#check-one-1", "one.html#check-one-2", "two.html#check-two-1"} <= set(hrefs)
    assert svg.count('class="claim-edge"') == 1  # lem-small is cited by the proof of thm-big
    assert "claim-legend" in page[page.index("</svg>") :]  # the legend is below the drawing, not on it
    table = page[page.index('<table class="claim-table') :]
    assert 'href="two.html#thm-big"' in table and "(Big L)" in table
    assert {"one.html", "two.html"} <= set(hrefs)  # the chapters' bands link to the chapters
    for href in hrefs:
        target, _, anchor = href.partition("#")
        assert (built / target).is_file(), href
        assert not anchor or anchor in ids((built / target).read_text()), href


def test_certified_checks_are_marked_and_coloured(built):
    """A certified check cell says so above it, and the map draws each statement in the blueprint's channels:
    its kind's shape (corner radius), a sympy check's border, its checks at instances as fill."""
    two = (built / "two.html").read_text()
    headers = re.findall(r'<p class="check-header([^"]*)">(.*?)</p>', two, re.S)
    assert [("check-sympy" in c, "check-certified" in c) for c, _ in headers] == [(True, False), (False, True)]
    assert "certified (ball arithmetic)" in headers[1][1] and "certified" not in headers[0][1]
    (line,) = re.findall(r'<p class="checked-by ([^"]*)">(.*?)</p>', two, re.S)
    assert "status-certified" in line[0] and "certified check" in line[1] and 'href="#check-two-2"' in line[1]
    page = (built / "map.html").read_text()
    svg = page[page.index("<svg") : page.index("</svg>")]
    boxes = {
        label: (kind, float(height), float(rx), fill, stroke, float(width))
        for kind, label, height, rx, fill, stroke, width in re.findall(
            r'<a class="claim-node kind-(\w+)" href="[^"]*#([\w-]+)"><title>[^<]*</title><rect [^>]*height="([\d.]+)" '
            r'rx="([\d.]+)" fill="(#\w+)" stroke="(#\w+)" stroke-width="([\d.]+)"/>',
            svg,
        )
    }
    # lem-small: a sympy and a numeric cell; thm-big: a sympy, a certified and the shared numeric cell
    sympy_blue, float_sand, certified_lilac = "#3b5bdb", "#ffe2a6", "#d3c2f5"
    kind, _, rx, fill, stroke, width = boxes["lem-small"]
    assert (kind, rx, fill, stroke, width) == ("lemma", 4.0, float_sand, sympy_blue, 2.8)
    kind, height, rx, fill, stroke, width = boxes["thm-big"]
    assert (kind, rx, fill, stroke, width) == ("theorem", min(height / 2, 18.0), certified_lilac, sympy_blue, 2.8)
    assert 'class="claim-chip check-certified"' in svg
    table = page[page.index('<table class="claim-table') :]
    statuses = re.findall(r'<span class="claim-status status-(\w+)">([^<]*)</span>', table)
    assert statuses == [("both", "sympy and numeric"), ("certified", "certified at instances, and checked")]


def test_chapter_checks_table_lists_every_check_of_the_page(built):
    """{chapter-checks} is generated from the check markers: each statement of the page with every cell
    that checks it (here and in other chapters), and the page's experiment checks in a row of their own."""
    two = (built / "two.html").read_text()
    table = two[two.index('<table class="claim-table chapter-checks') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]
    assert len(rows) == 1  # thm-big; lem-small is defined on page one
    assert 'href="#thm-big"' in rows[0] and "(Big L)" in rows[0]
    assert {"#check-two-1", "#check-two-2", "one.html#check-one-2"} <= set(re.findall(r'href="([^"]+)"', rows[0]))
    assert "certified at instances, and checked" in rows[0]
    one = (built / "one.html").read_text()
    table = one[one.index('<table class="claim-table chapter-checks') :]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table[: table.index("</table>")], re.S)[1:]
    assert len(rows) == 2  # lem-small, defined here; thm-big, defined on page two and checked here too
    assert 'href="#lem-small"' in rows[0] and set(re.findall(r'href="#(check-one-\d)"', rows[0])) == {
        "check-one-1",
        "check-one-2",
    }
    assert 'href="two.html#thm-big"' in rows[1] and "(ch. 2)" in rows[1]
    assert re.findall(r'href="([^"]*check-[^"]+)"', rows[1]) == ["#check-one-2"]  # only this page's cell
    three = (built / "three.html").read_text()
    table = three[three.index('<table class="claim-table chapter-checks') :]
    (row,) = re.findall(r"<tr[^>]*>(.*?)</tr>", table[: table.index("</table>")], re.S)[1:]
    assert "The experiment of this chapter" in row and 'href="#check-three-1"' in row
    assert "numeric checks" in row


def test_environment_table_compares_pins_with_the_environment(built):
    page = (built / "repro.html").read_text()
    assert '<code class="docutils literal notranslate"><span class="pre">numpy</span></code>' in page
    assert "(differs from the pin)" in page  # numpy 0.0.1 is pinned, a real numpy is installed
    assert page.count("(differs from the pin)") == 1  # sphinx 7.4.7 is what runs this build
    assert "CPython" in page or "PyPy" in page


def test_pdf_is_linked_once_it_exists(source):
    html = build(source, "html")
    assert "not part of this build" in (html / "repro.html").read_text()
    pdf = source / "_build" / "latex" / "lagtheory.pdf"
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.write_bytes(b"%PDF-1.5 a stand-in")
    html = build(source, "html")
    page = (html / "repro.html").read_text()
    (link,) = re.findall(r'href="(_downloads/[^"]+/lagtheory\.pdf)"', page)
    assert (html / link).read_bytes() == b"%PDF-1.5 a stand-in"
    pdf.unlink()


def test_the_pdf_prints_exercises_without_solutions(source):
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert "Show it." in tex
    assert "The secret solution." not in tex
    # the root page is not numbered, its chapters are: numbering goes off first, then on before them
    assert (
        tex.index("\\setcounter{secnumdepth}{-1}")
        < tex.index("\\setcounter{secnumdepth}{2}")
        < tex.index("\\chapter{One}")
    )
    html = (build(source, "html") / "repro.html").read_text()
    assert "The secret solution." in html  # the HTML keeps the solution


def test_the_pdf_prints_check_outputs_without_their_code(source):
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert r"\PYG{n}{x}" not in tex  # a cell that is not a check prints its outputs only (here none)
    assert "cell_input" not in tex
    assert r"\PYG{n+nb}{print}" not in tex  # every check cell's code is left out
    pointers = re.findall(r"The check\\textquotesingle\{\}s code is in (\S+), cell (\d+)\.", tex)
    assert pointers == [
        ("one.ipynb", "1"),
        ("one.ipynb", "3"),
        ("two.ipynb", "1"),
        ("two.ipynb", "2"),
        ("three.ipynb", "1"),
    ]
    assert tex.count("checked") >= 6  # the outputs stay
    html = (build(source, "html") / "one.html").read_text()
    assert "print" in html and "code is in" not in html  # the HTML keeps the (folded) code


def test_the_pdf_breaks_a_long_digest(source):
    """A 64-character hash in inline code may break in the PDF (latex_layout.breakable_digests); the HTML
    shows it as written."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert r"1880aeda\allowbreak{}8ae751cd\allowbreak{}" in tex
    html = (build(source, "html") / "repro.html").read_text()
    assert "1880aeda8ae751cd14fd453b965f6a14f7f55eeb764925d78bc825acc05da58e" in html


def test_the_pdf_titles_every_proof_box(source):
    """sphinx-proof's proof box has no title node; in LaTeX its title bar stayed empty (the first
    token of the proof taken as the title). latex_layout gives each the title "Proof"."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    proofs = re.findall(r"\\begin\{sphinxadmonition\}\{note\}\{Proof\}\s*\\sphinxAtStartPar\s*([^\n]*)", tex)
    assert proofs[0] == "Clear." and proofs[1].startswith("By ") and len(proofs) == 2, proofs
    assert "Proof. Clear." not in tex
    html = (build(source, "html") / "one.html").read_text()
    assert "Proof. Clear." in html  # the HTML as sphinx-proof writes it


def test_the_pdf_links_references_to_exercises(source):
    """sphinx-exercise labels an exercise in LaTeX as exercise:<label> only; a {ref} to it was an
    undefined reference in the PDF. latex_layout links it there, numbered as in the HTML."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert r"\label{exercise:ex-one}" in tex
    assert r"As \hyperref[exercise:ex-one]{Exercise 4.1} asks." in tex
    assert r"\ref{\detokenize{repro:ex-one}}" not in tex  # the undefined form
    html = (build(source, "html") / "map.html").read_text()
    assert re.search(
        r'As <a class="reference internal" href="repro.html#ex-one"><span class="std std-numref">Exercise 4\.1</span></a> asks',
        html,
    )


def test_the_pdf_draws_the_claim_map(source):
    """The PDF had only the claim map's table; claim_graph.render_tikz draws the HTML's layout as a
    TikZ picture whose statement names and check squares link to labels that exist in the PDF."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    picture = tex[tex.index(r"\begin{tikzpicture}") : tex.index(r"\end{tikzpicture}")]
    targets = re.findall(r"\\hyperref\[\\detokenize\{([^}]+)\}\]", picture)
    assert {"one:lem-small", "two:thm-big", "one::doc", "two::doc"} <= set(targets)
    assert len([t for t in targets if "check" in t]) == 5  # lem-small: 2 cells, thm-big: 3 (one shared)
    for target in set(targets):  # every link of the drawing goes somewhere in the PDF (sphinx-proof
        # writes its labels without \detokenize)
        assert rf"\label{{\detokenize{{{target}}}}}" in tex or rf"\label{{{target}}}" in tex, target
    assert picture.count(r"\draw[-stealth") == 1  # the proof of thm-big cites lem-small
    assert "The claim map, in the convention of Lean blueprints. Shape" in tex  # the legend, as text
    assert (
        r"line width=1.4pt, rounded corners=4.0\claimmapunit" in picture
    )  # lem-small: sympy border, a lemma's corners
    html = (build(source, "html") / "map.html").read_text()
    assert "<svg" in html and "tikzpicture" not in html


def test_the_pdf_sets_generated_tables_with_their_widths(source):
    """A table built by table_frame was an automatic tabulary in LaTeX (a column narrower than
    "Proposition", no page breaks); latex_layout sets it as a longtable with its widths."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert tex.count(r"\begin{longtable}{\X{40}{100}\X{20}{100}\X{40}{100}}") == 3  # {chapter-checks}
    assert r"\begin{longtable}{\X{30}{100}\X{16}{100}\X{36}{100}\X{18}{100}}" in tex  # the claim table
    html = (build(source, "html") / "one.html").read_text()
    assert "colwidths-given" not in html and "longtable" not in html  # the HTML as before


def test_the_pdf_leaves_the_api_reference_to_the_html(source):
    """In the PDF a section that documents a module (automodule) is left out, and a page of the reference
    left without a table goes whole; the index page keeps its table and its PDF-only pointer; a link to
    what left becomes plain text. The HTML keeps everything."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    assert "What each module holds." in tex and "The reference is in the HTML." in tex and "frames" in tex
    assert "Its own module" not in tex and "A check cell" not in tex  # the index page's module section
    assert r"\chapter{Frames}" not in tex and "Tables." not in tex  # the page of the reference
    assert "The frame of a docutils table" not in tex
    after = tex.split("Tables come from")[1][:300]
    assert "table_frame.table_frame" not in after and "hyperref" not in after.split("\n")[0]
    html = build(source, "html")
    assert "The frame of a docutils table" in (html / "api_frames.html").read_text()
    assert "The reference is in the HTML." not in (html / "api.html").read_text()
    assert 'href="api_frames.html#table_frame.table_frame"' in (html / "map.html").read_text()


def test_the_pdf_keeps_statements_whole_and_opens_with_one_introduction(source):
    """A statement and an exercise are each set in one unbreakable box (bookstatement), a proof is
    not; the root page's opening and sections make one chapter, Introduction, before the others."""
    latex = build(source, "latex")
    tex = "".join(p.read_text() for p in latex.glob("*.tex"))
    boxes = re.findall(r"\\begin\{bookstatement\}(.*?)\\end\{bookstatement\}", tex, re.S)
    assert len(boxes) == 3  # the lemma, the theorem, the exercise
    assert "A lemma." in boxes[0] and "A theorem." in boxes[1] and "Show it." in boxes[2]
    assert not any("Proof" in box for box in boxes)
    introduction = tex.index(r"\chapter{Introduction}")
    assert introduction < tex.index("The opening.") < tex.index(r"\section{An aside}") < tex.index(r"\chapter{One}")


def test_the_pdf_opens_each_part_of_the_table_of_contents(source, tmp_path):
    """Each part of _toc.yml is opened by \\bookpart{caption} before its first chapter."""
    from types import SimpleNamespace

    from docutils.utils import new_document
    from latex_layout import parts_in_contents_and_heads
    from sphinx import addnodes
    from sphinx_external_toc.parsing import parse_toc_yaml

    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: index\nparts:\n  - caption: First\n    chapters:\n      - file: one\n      - file: two\n"
        "  - caption: Second\n    chapters:\n      - file: three\n"
    )
    app = SimpleNamespace(
        builder=SimpleNamespace(format="latex"), env=SimpleNamespace(external_site_map=parse_toc_yaml(toc))
    )
    document = new_document("index")
    for name in ("one", "two", "three"):
        document += addnodes.start_of_file(docname=name)
    parts_in_contents_and_heads(app, document, "index")
    written = [node.astext() if node.tagname == "raw" else node["docname"] for node in document.children]
    assert written == ["\\bookpart{First}\n", "one", "two", "\\bookpart{Second}\n", "three"]
