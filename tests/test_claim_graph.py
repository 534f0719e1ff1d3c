"""The claim map's drawing (book/_ext/claim_graph.py): one channel per meaning, as Lean blueprints draw.

Shape is the statement's kind, the border says whether sympy checks it, the fill whether it is checked at
instances (floating point or certified); the key shows every shape, border, fill and chip, and the drawing's
own text (bands' titles, arrows) takes the page's colour, so that it reads in dark mode.
"""

import re

import claim_graph
import pytest
from claim_graph import GraphNode, render_legend_svg, render_svg, render_tikz


def node(label: str, kind: str, checks: list[str]) -> GraphNode:
    return GraphNode(
        label=label,
        name=label.upper(),
        title="a title",
        column="Chapter 1",
        kind=kind,
        href=f"#{label}",
        checks=[(c, f"#check-{label}-{i}", f"{c} check {i}") for i, c in enumerate(checks)],
        column_href="#",
    )


NODES = [
    node("def-a", "definition", []),
    node("lem-b", "lemma", ["numeric"]),
    node("prop-c", "proposition", ["sympy"]),
    node("thm-d", "theorem", ["sympy", "certified"]),
    node("cor-e", "corollary", ["numeric", "certified"]),
]


def rects(svg: str) -> dict[str, dict[str, str]]:
    found = {}
    for label, rect in re.findall(r'href="#([\w-]+)"><title>[^<]*</title><rect ([^>]*)/>', svg):
        if not label.startswith("check-"):  # a chip, not a box
            found[label] = dict(re.findall(r'([\w-]+)="([^"]*)"', rect))
    return found


def test_shape_border_and_fill_are_separate_channels():
    drawn = rects(render_svg(NODES, [("def-a", "lem-b")]))
    radius = {label: float(r["rx"]) for label, r in drawn.items()}
    assert radius["def-a"] == 0.0  # square corners
    assert radius["lem-b"] == radius["prop-c"] == 4.0
    for label in ("thm-d", "cor-e"):  # round ends: 18, or half the height of a lower box
        assert radius[label] == min(18.0, float(drawn[label]["height"]) / 2) >= 3 * radius["lem-b"]
    border = {label: (r["stroke"], r["stroke-width"]) for label, r in drawn.items()}
    assert border["prop-c"] == border["thm-d"] == ("#3b5bdb", "2.8")  # sympy
    assert border["def-a"] == border["lem-b"] == border["cor-e"] == ("#868e96", "1.2")
    fill = {label: r["fill"] for label, r in drawn.items()}
    assert fill["def-a"] == fill["prop-c"] == "#ffffff"
    assert fill["lem-b"] == "#ffe2a6"
    assert fill["thm-d"] == fill["cor-e"] == "#d3c2f5"


def test_the_drawings_own_text_takes_the_pages_colour():
    """Bands' titles were #343a40 on the dark theme's #121212: near-invisible. Text outside a box and the
    arrows are drawn in currentColor; text inside a box is dark on a light fill."""
    svg = render_svg(NODES, [("def-a", "lem-b")])
    assert re.findall(r'class="claim-band-title"[^>]*fill="([^"]+)"', svg) == ["currentColor"]
    assert 'stroke="currentColor"' in svg and 'fill="#555"' not in svg
    for fill in claim_graph.FILL.values():  # type on a fill: contrast at least 7 (WCAG AAA)
        assert contrast(claim_graph.INK, fill) >= 7.0, fill
    for colour in claim_graph.CHIP_FILL.values():  # a chip's white letter: at least 4.5
        assert contrast("#ffffff", colour) >= 4.5, colour


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_key_shows_every_shape_border_fill_and_chip():
    legend = render_legend_svg()
    rows = re.findall(r'<p class="claim-legend-row"><strong>([^<]+)</strong>(.*?)</p>', legend)
    assert [head for head, _ in rows] == ["Shape: the kind.", "Border.", "Fill.", "Chips.", "Arrows."]
    drawn = dict(rows)
    shapes = re.findall(r'rx="([\d.]+)"', drawn["Shape: the kind."])
    assert [float(r) for r in shapes] == [0.0, 4.0, 9.0]  # square, slightly rounded, round ends (height 18)
    assert re.findall(r'stroke="(#\w+)" stroke-width="([\d.]+)"', drawn["Border."]) == [
        ("#3b5bdb", "2.8"),
        ("#868e96", "1.2"),
    ]
    assert re.findall(r'fill="(#\w+)" stroke', drawn["Fill."]) == ["#ffffff", "#ffe2a6", "#d3c2f5"]
    assert re.findall(r">([SNC])</text>", drawn["Chips."]) == ["S", "N", "C"]
    for words in ("a definition", "a theorem or a corollary", "checked symbolically (sympy)", "certified"):
        assert words in legend


def test_the_pdf_draws_the_same_channels():
    tikz = render_tikz(NODES, [], lambda text: text)
    boxes = re.findall(r"\\draw\[fill=claimfill(\w+), draw=claimborder(\w+), line width=([\d.]+)pt, ([^\]]+)\]", tikz)
    assert boxes[0] == ("none", "none", "0.6", "sharp corners")
    assert boxes[1] == ("numeric", "none", "0.6", r"rounded corners=4.0\claimmapunit")
    assert boxes[2] == ("none", "sympy", "1.4", r"rounded corners=4.0\claimmapunit")
    assert boxes[3][3] == r"rounded corners=18.0\claimmapunit"
    assert boxes[3][:3] == ("certified", "sympy", "1.4") and boxes[4][:3] == ("certified", "none", "0.6")
    assert re.findall(r"font=\\fontsize\{([\d.]+)\}", tikz) and all(
        float(size) >= 7 for size in re.findall(r"font=\\fontsize\{([\d.]+)\}", tikz)
    )


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        claim_graph.shape_of("remark")
