"""The claim map as an inline SVG (HTML) or a TikZ picture (PDF): one band per chapter, one
linked box per statement.

Pure layout and drawing (no Sphinx): :func:`render_svg` takes the statements in
reading order, each with its link, status and check cells (already resolved to
links by ``claim_links``), and the citation edges, and returns SVG markup;
``render_tikz`` draws the same layout (``layout``, ``_edge_curves``) for LaTeX.

* Chapters are horizontal bands, top to bottom in reading order, each headed by
  the chapter's number and title (a link to the chapter); a band holds its
  statements left to right in the order they appear, ``PER_ROW`` to a row.
* A node is a box in the Lean blueprint's convention, one channel per meaning: its *shape*
  says the statement's kind (square corners: a definition; slightly rounded: a lemma or a
  proposition; round ends: a theorem or a corollary), its *border* whether sympy checks it
  symbolically (thick and blue: yes; thin and grey: no), its *fill* whether it is checked at
  instances (white: not; sand: in floating point; lilac: certified in ball arithmetic, beside
  the other checks). It shows the statement's number and its title (cut to fit; the whole
  title and the status in words are the tooltip); the box links to the statement, and a row
  of chips under its name links to each check cell (sympy chips first, then numeric, then
  certified; each kind its colour and its letter), wrapping after ``CHIPS_PER_ROW``.
* An arrow runs from a result to each statement whose proof cites it: from the
  bottom of a box down to the top of a box in a later band, or as an arc over
  the row when both are in one chapter. Where several arrows leave or enter one
  box, their ends are spread along its edge.
* The drawing has no legend inside it: :func:`render_legend_svg` draws the key (each shape,
  border, fill and chip, in the same code) that ``claim_links`` puts below it. The boxes
  carry their colours as attributes (light fills with dark type, legible on a light or a
  dark page); the bands' titles and the arrows take the page's text colour
  (``currentColor``), so they stay legible in the theme's dark mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

NODE_WIDTH = 160
NODE_GAP = 38
PER_ROW = 4
HEADER = 20  # height of a band's title line
ARC_ROOM = 24  # between a band's title and its boxes, for arcs between statements of one chapter
ROW_GAP = 16
BAND_GAP = 30
CHIP = 10
CHIP_GAP = 2
CHIPS_PER_ROW = 12
MARGIN = 8
TITLE_CHARACTERS = 27  # of a statement's title, in 11 px type, in a box NODE_WIDTH wide

SHAPE_KINDS = {
    "definition": ("definition",),
    "lemma": ("lemma", "proposition"),
    "theorem": ("theorem", "corollary"),
}
"""The three shapes and the statement kinds each stands for."""
SHAPE_WORDS = {"definition": "a definition", "lemma": "a lemma or a proposition", "theorem": "a theorem or a corollary"}
BORDER = {True: ("#3b5bdb", 2.8), False: ("#868e96", 1.2)}
"""(colour, width) of a box's border, by whether a sympy check is attached."""
BORDER_WORDS = {True: "checked symbolically (sympy)", False: "no sympy check"}
FILL = {"none": "#ffffff", "numeric": "#ffe2a6", "certified": "#d3c2f5"}
"""A box's fill by its checks at instances: none, numeric runs (floating point), certified (ball arithmetic)."""
FILL_WORDS = {
    "none": "not checked at instances",
    "numeric": "checked at instances in floating point (numeric runs)",
    "certified": "certified at instances (ball arithmetic), beside the other checks",
}
CHIP_FILL = {"sympy": "#3b5bdb", "numeric": "#a65f00", "certified": "#862e9c"}
CHIP_LETTER = {"sympy": "S", "numeric": "N", "certified": "C"}
CHIP_WORDS = {"sympy": "a sympy check cell", "numeric": "a numeric check cell", "certified": "a certified check cell"}
INK = "#212529"
"""Type inside a box (every fill is light)."""


def shape_of(kind: str) -> str:
    """The shape ('definition', 'lemma' or 'theorem') of a statement of ``kind``."""
    for shape, kinds in SHAPE_KINDS.items():
        if kind in kinds:
            return shape
    raise ValueError(f"kind must be one of {[k for ks in SHAPE_KINDS.values() for k in ks]}, got {kind!r}")


def symbolic(checks: list[tuple[str, str, str]]) -> bool:
    """Whether a sympy check is attached (the border's channel)."""
    return any(kind == "sympy" for kind, _, _ in checks)


def fill_of(checks: list[tuple[str, str, str]]) -> str:
    """'certified', 'numeric' or 'none': the strongest check at instances attached (the fill's channel)."""
    kinds = {kind for kind, _, _ in checks}
    return "certified" if "certified" in kinds else "numeric" if "numeric" in kinds else "none"


ROUND_ENDS = 18
"""The corner radius of a theorem's box (half its height when lower): its ends read as round, and the
chips in its lower corners stay inside the curve."""


def _corner(shape: str, height: float) -> float:
    """The corner radius of a box of ``shape`` and ``height``: 0, 4, or :data:`ROUND_ENDS` (at most half
    the height)."""
    return {"definition": 0.0, "lemma": 4.0, "theorem": min(height / 2, ROUND_ENDS)}[shape]


def _words(node: GraphNode) -> str:
    """A node's tooltip: its name and title, its kind's shape, border and fill in words."""
    sympy, fill = symbolic(node.checks), fill_of(node.checks)
    title = f" ({node.title})" if node.title else ""
    return f"{node.name}{title}: {BORDER_WORDS[sympy]}; {FILL_WORDS[fill]}"


@dataclass
class GraphNode:
    """One statement as the graph shows it; ``checks`` holds (kind, href, tooltip) per check cell."""

    label: str
    name: str
    title: str
    column: str
    kind: str
    href: str
    checks: list[tuple[str, str, str]] = field(default_factory=list)
    column_href: str = ""


@dataclass
class _Box:
    node: GraphNode
    x: float
    y: float
    height: float
    band: int
    row: int

    @property
    def centre(self) -> float:
        return self.x + NODE_WIDTH / 2

    @property
    def bottom(self) -> float:
        return self.y + self.height


def _node_height(node: GraphNode) -> float:
    rows = math.ceil(len(node.checks) / CHIPS_PER_ROW)
    return 38 + rows * (CHIP + CHIP_GAP) + (4 if rows else 0)


def layout(graph_nodes: list[GraphNode]) -> tuple[dict[str, _Box], list[tuple[str, str, float]], float, float]:
    """Boxes by label, the bands' (title, link, y), and the drawing's width and height."""
    chapters: dict[str, list[GraphNode]] = {}
    for node in graph_nodes:
        chapters.setdefault(node.column, []).append(node)
    boxes: dict[str, _Box] = {}
    bands = []
    y = float(MARGIN)
    widest = 1
    for band, members in enumerate(chapters.values()):
        bands.append((members[0].column, members[0].column_href, y))
        y += HEADER + ARC_ROOM
        for row_start in range(0, len(members), PER_ROW):
            row = members[row_start : row_start + PER_ROW]
            widest = max(widest, len(row))
            height = max(_node_height(n) for n in row)
            for i, node in enumerate(row):
                x = MARGIN + i * (NODE_WIDTH + NODE_GAP)
                boxes[node.label] = _Box(node, x, y, _node_height(node), band, row_start // PER_ROW)
            y += height + ROW_GAP
        y += BAND_GAP - ROW_GAP
    width = 2 * MARGIN + widest * NODE_WIDTH + (widest - 1) * NODE_GAP
    return boxes, bands, width, y - BAND_GAP + MARGIN


def _spread(count: int, index: int) -> float:
    """The x offset, within a box, of the index-th of count arrow ends on one edge."""
    return NODE_WIDTH * (index + 1) / (count + 1)


Point = tuple[float, float]


def _edge_curves(boxes: dict[str, _Box], edges: list[tuple[str, str]]) -> list[tuple[str, str, tuple[Point, ...]]]:
    """(cited, citing, (start, control 1, control 2, end)) of the cubic curve of each edge between
    two drawn statements, in the drawing's coordinates (y downwards)."""
    drawn = [(a, b) for a, b in edges if a in boxes and b in boxes]
    down = [
        (a, b) for a, b in drawn if (boxes[a].y, boxes[a].x) != (boxes[b].y, boxes[b].x) and boxes[a].y < boxes[b].y
    ]
    leaving: dict[str, list[str]] = {}
    entering: dict[str, list[str]] = {}
    for a, b in down:
        leaving.setdefault(a, []).append(b)
        entering.setdefault(b, []).append(a)
    for targets in leaving.values():
        targets.sort(key=lambda t: boxes[t].centre)
    for sources in entering.values():
        sources.sort(key=lambda s: boxes[s].centre)
    curves = []
    for a, b in drawn:
        p, q = boxes[a], boxes[b]
        if (a, b) in down:
            x1 = p.x + _spread(len(leaving[a]), leaving[a].index(b))
            x2 = q.x + _spread(len(entering[b]), entering[b].index(a))
            y1, y2 = p.bottom, q.y - 1
            dy = max(18.0, (y2 - y1) / 2)
            curve = ((x1, y1), (x1, y1 + dy), (x2, y2 - dy), (x2, y2))
        elif p.y == q.y:  # one row of one chapter: an arc over the row
            x1 = p.x + NODE_WIDTH * (0.75 if p.x < q.x else 0.25)
            x2 = q.x + NODE_WIDTH * (0.25 if p.x < q.x else 0.75)
            top = p.y - ARC_ROOM + 4
            curve = ((x1, p.y), (x1, top), (x2, top), (x2, q.y - 1))
        else:  # a citation upwards (a later statement cited earlier): from the top of one to the bottom of the other
            x1, x2 = p.centre, q.centre
            y1, y2 = p.y, q.bottom + 1
            dy = max(18.0, (y1 - y2) / 2)
            curve = ((x1, y1), (x1, y1 - dy), (x2, y2 + dy), (x2, y2))
        curves.append((a, b, curve))
    return curves


def _svg_path(curve: tuple[Point, ...]) -> str:
    """The SVG path of a cubic curve (start, control 1, control 2, end)."""
    (x1, y1), (c1x, c1y), (c2x, c2y), (x2, y2) = curve
    return f"M{x1:.1f},{y1:.1f} C{c1x:.1f},{c1y:.1f} {c2x:.1f},{c2y:.1f} {x2:.1f},{y2:.1f}"


def _short(title: str, room: int = TITLE_CHARACTERS) -> str:
    """A statement's title cut to fit its box (the full title is the box's tooltip)."""
    return title if len(title) <= room else title[: room - 1].rstrip() + "\u2026"


def _svg_shape(shape: str, sympy: bool, fill: str, x: float, y: float, width: float, height: float) -> str:
    """The SVG rect of a box: ``shape``'s corners, the border of ``sympy``, the fill ``fill``."""
    colour, line = BORDER[sympy]
    radius = _corner(shape, height)
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" rx="{radius:.1f}" '
        f'fill="{FILL[fill]}" stroke="{colour}" stroke-width="{line}"/>'
    )


def _svg_chip(kind: str, x: float, y: float) -> str:
    """A check chip: a square in the kind's colour with the kind's letter in white."""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{CHIP}" height="{CHIP}" rx="1.5" fill="{CHIP_FILL[kind]}"/>'
        f'<text x="{x + CHIP / 2:.1f}" y="{y + CHIP - 1.8:.1f}" text-anchor="middle" font-size="8" '
        f'font-weight="bold" fill="#ffffff" pointer-events="none">{CHIP_LETTER[kind]}</text>'
    )


def _svg_box(node: GraphNode, x: float, y: float, height: float) -> str:
    """A statement's linked box: shape, border, fill, its number and its title."""
    centre = x + NODE_WIDTH / 2
    return (
        f'<a class="claim-node kind-{node.kind}" href="{escape(node.href)}">'
        f"<title>{escape(_words(node))}</title>"
        f"{_svg_shape(shape_of(node.kind), symbolic(node.checks), fill_of(node.checks), x, y, NODE_WIDTH, height)}"
        f'<text x="{centre:.1f}" y="{y + 16:.1f}" text-anchor="middle" font-size="13" '
        f'font-weight="bold" fill="{INK}">{escape(node.name)}</text>'
        f'<text x="{centre:.1f}" y="{y + 31:.1f}" text-anchor="middle" font-size="11" '
        f'fill="{INK}">{escape(_short(node.title))}</text></a>'
    )


def render_legend_svg() -> str:
    """The claim map's key as one small SVG per entry, in the drawing's own code: each shape,
    each border, each fill, each chip and the arrow, with its meaning in words beside it
    (HTML; the words take the page's colours)."""
    entries = []

    def icon(drawing: str, width: int = 42, height: int = 24) -> str:
        return (
            f'<svg class="claim-legend-icon" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" aria-hidden="true">{drawing}</svg>'
        )

    for shape in SHAPE_KINDS:
        entries.append(("shape", icon(_svg_shape(shape, False, "none", 3, 3, 36, 18)), SHAPE_WORDS[shape]))
    for sympy in (True, False):
        entries.append(("border", icon(_svg_shape("lemma", sympy, "none", 3, 3, 36, 18)), BORDER_WORDS[sympy]))
    for fill in FILL:
        entries.append(("fill", icon(_svg_shape("lemma", False, fill, 3, 3, 36, 18)), FILL_WORDS[fill]))
    for kind in CHIP_FILL:
        entries.append(("chip", icon(_svg_chip(kind, 2, 2), 13, 13), CHIP_WORDS[kind]))
    arrow = (
        '<path d="M3,12 L34,12" stroke="currentColor" stroke-width="1.3"/>'
        '<path d="M30,8 L38,12 L30,16 z" fill="currentColor"/>'
    )
    entries.append(("arrow", icon(arrow), "from a result to each statement whose proof cites it"))
    heads = {"shape": "Shape: the kind", "border": "Border", "fill": "Fill", "chip": "Chips", "arrow": "Arrows"}
    out = ['<div class="claim-legend">']
    for group, head in heads.items():
        items = "".join(
            f'<span class="claim-key-item">{drawing} {escape(words)}</span>'
            for entry_group, drawing, words in entries
            if entry_group == group
        )
        out.append(f'<p class="claim-legend-row"><strong>{head}.</strong> {items}</p>')
    out.append("</div>")
    return "\n".join(out)


def render_svg(graph_nodes: list[GraphNode], edges: list[tuple[str, str]]) -> str:
    """SVG markup of the claim map (see the module docstring)."""
    boxes, bands, width, height = layout(graph_nodes)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="claim-graph-svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" '
        'aria-label="Claim map: statements of the book, the citations between their proofs, and their checks">',
        '<defs><marker id="claim-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>',
    ]
    for title, href, y in bands:
        text = (
            f'<text class="claim-band-title" x="{MARGIN}" y="{y + 14:.1f}" font-size="13" font-weight="bold" '
            f'fill="currentColor">{escape(title)}</text>'
        )
        out.append(f'<a href="{escape(href)}">{text}</a>' if href else text)
    for cited, citing, curve in _edge_curves(boxes, edges):
        out.append(
            f'<path class="claim-edge" d="{_svg_path(curve)}" fill="none" stroke="currentColor" stroke-opacity="0.6" stroke-width="1.3" '
            f'marker-end="url(#claim-arrow)"><title>{escape(boxes[cited].node.name)} is cited by the proof of '
            f"{escape(boxes[citing].node.name)}</title></path>"
        )
    for box in boxes.values():
        out.append(_svg_box(box.node, box.x, box.y, box.height))
        for i, (kind, href, label) in enumerate(box.node.checks):
            row, col = divmod(i, CHIPS_PER_ROW)
            x = box.x + 7 + col * (CHIP + CHIP_GAP)
            y = box.y + 38 + row * (CHIP + CHIP_GAP)
            out.append(
                f'<a class="claim-chip check-{kind}" href="{escape(href)}"><title>{escape(label)}</title>{_svg_chip(kind, x, y)}</a>'
            )
    out.append("</svg>")
    return "\n".join(out)


TIKZ_PREAMBLE = r"""\setlength{\claimmapunit}{\dimexpr\linewidth/%(width)d\relax}%%
\ifdim\dimexpr\claimmapunit*%(height)d\relax>0.8\textheight
  \setlength{\claimmapunit}{\dimexpr0.8\textheight/%(height)d\relax}%%
\fi
\ifdim\pagegoal<\maxdimen
  \dimen0=\dimexpr\pagegoal-\pagetotal-3\baselineskip\relax
  \ifdim\dimexpr\claimmapunit*%(height)d\relax>\dimen0
    \ifdim\dimen0>0.55\textheight
      \setlength{\claimmapunit}{\dimexpr\dimen0/%(height)d\relax}%%
    \fi
  \fi
\fi"""


def _hex(colour: str) -> str:
    """'#f3d9fa' -> 'F3D9FA' (xcolor's HTML model)."""
    return colour.lstrip("#").upper()


def render_tikz(graph_nodes: list[GraphNode], edges: list[tuple[str, str]], escape: Callable[[str], str]) -> str:
    r"""The claim map as a LaTeX ``tikzpicture``, from the same layout as :func:`render_svg`.

    Here each node's ``href``, ``column_href`` and each check's link are LaTeX labels (``doc:label``);
    a statement's number and title, a band's title and each check's square link to them.
    ``escape`` makes plain text safe for LaTeX (Sphinx's ``texescape.escape``). One drawing unit
    (a pixel of the SVG) is ``\claimmapunit`` (booklayout.sty): the drawing is as wide as the
    text, or 0.8 of the text's height where that is smaller, and smaller still to fit the rest of
    the page where that rest is more than 0.55 of the text's height (so the page that introduces
    the drawing is not left nearly empty); the type has fixed sizes (titles 7 pt). The chips carry
    their kind's colour only (a letter would print below 7 pt).
    """
    boxes, bands, width, height = layout(graph_nodes)

    def link(target: str, text: str) -> str:
        return rf"\hyperref[\detokenize{{{target}}}]{{{text}}}" if target else text

    out = [r"\begingroup\centering", TIKZ_PREAMBLE % {"width": round(width), "height": round(height)}]
    for fill, colour in FILL.items():
        out.append(rf"\definecolor{{claimfill{fill}}}{{HTML}}{{{_hex(colour)}}}%")
    for sympy, (colour, _) in BORDER.items():
        out.append(rf"\definecolor{{claimborder{'sympy' if sympy else 'none'}}}{{HTML}}{{{_hex(colour)}}}%")
    for kind, colour in CHIP_FILL.items():
        out.append(rf"\definecolor{{claimchip{kind}}}{{HTML}}{{{_hex(colour)}}}%")
    out.append(r"\begin{tikzpicture}[x=\claimmapunit, y=-\claimmapunit]")
    for title, target, y in bands:
        out.append(
            rf"\node[anchor=base west, inner sep=0pt, font=\bfseries\small] at ({MARGIN}, {y + 14:.1f}) "
            rf"{{{link(target, escape(title))}}};"
        )
    for _, _, curve in _edge_curves(boxes, edges):
        (x1, y1), (c1x, c1y), (c2x, c2y), (x2, y2) = curve
        out.append(
            rf"\draw[-stealth, draw=black!67, draw opacity=0.6, line width=0.7pt] ({x1:.1f}, {y1:.1f}) "
            rf".. controls ({c1x:.1f}, {c1y:.1f}) and ({c2x:.1f}, {c2y:.1f}) .. ({x2:.1f}, {y2:.1f});"
        )
    for box in boxes.values():
        node = box.node
        sympy = symbolic(node.checks)
        corner = _corner(shape_of(node.kind), box.height)
        rounding = rf"rounded corners={corner:.1f}\claimmapunit" if corner else "sharp corners"
        out.append(
            rf"\draw[fill=claimfill{fill_of(node.checks)}, draw=claimborder{'sympy' if sympy else 'none'}, "
            rf"line width={1.4 if sympy else 0.6}pt, {rounding}] "
            rf"({box.x:.1f}, {box.y:.1f}) rectangle ({box.x + NODE_WIDTH:.1f}, {box.bottom:.1f});"
        )
        out.append(
            rf"\node[anchor=base, inner sep=0pt, font=\bfseries\footnotesize] at ({box.centre:.1f}, {box.y + 16:.1f}) "
            rf"{{{link(node.href, escape(node.name))}}};"
        )
        if node.title:
            out.append(
                rf"\node[anchor=base, inner sep=0pt, font=\fontsize{{7}}{{8}}\selectfont] at "
                rf"({box.centre:.1f}, {box.y + 31:.1f}) {{{link(node.href, escape(_short(node.title)))}}};"
            )
        for i, (kind, target, _) in enumerate(node.checks):
            row, col = divmod(i, CHIPS_PER_ROW)
            x = box.x + 7 + col * (CHIP + CHIP_GAP)
            y = box.y + 38 + row * (CHIP + CHIP_GAP)
            chip = rf"\textcolor{{claimchip{kind}}}{{\rule{{{CHIP}\claimmapunit}}{{{CHIP}\claimmapunit}}}}"
            out.append(rf"\node[anchor=north west, inner sep=0pt] at ({x:.1f}, {y:.1f}) {{{link(target, chip)}}};")
    out.append(r"\end{tikzpicture}\par\endgroup")
    return "\n".join(out)
