"""The book's one palette (lagtheory.palette): colour-blind safe, one meaning per colour."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib.colors import to_hex, to_rgb

from lagtheory import palette

# Machado, Oliveira and Fernandes (2009), severity 1: linear-RGB simulations of dichromacy.
DICHROMACY = {
    "normal": np.eye(3),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
WHITE_XYZ = np.array([0.95047, 1.0, 1.08883])
MIN_DELTA_E = 15.0
"""CIE76 distance every two colours of one role keep under each simulation (about 2.3 is a just-noticeable
difference; 15 keeps neighbouring cells and curves apart at a glance)."""


def linear_rgb(colour: str) -> np.ndarray:
    c = np.array(to_rgb(colour))
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(linear: np.ndarray) -> np.ndarray:
    xyz = SRGB_TO_XYZ @ np.clip(linear, 0.0, 1.0) / WHITE_XYZ
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


ROLES = {
    "verdicts (with not estimable and the background)": {
        **palette.VERDICTS,
        "not estimable": palette.NOT_ESTIMABLE,
        "paper": palette.PAPER,
    },
    "schedules": palette.SCHEDULES,
    "series": dict(enumerate(palette.SERIES)),
    "success and failure": {"succeeds": palette.SUCCEEDS, "fails": palette.FAILS},
}


@pytest.mark.parametrize("vision", DICHROMACY)
@pytest.mark.parametrize("role", ROLES)
def test_colours_of_one_role_stay_apart_under_colour_blindness(role: str, vision: str) -> None:
    seen = {name: lab(DICHROMACY[vision] @ linear_rgb(colour)) for name, colour in ROLES[role].items()}
    for (a, lab_a), (b, lab_b) in itertools.combinations(seen.items(), 2):
        distance = float(np.linalg.norm(lab_a - lab_b))
        assert distance >= MIN_DELTA_E, f"{role}: {a} and {b} are {distance:.1f} apart under {vision}"


OPPOSITION_DELTA_E = 60.0
"""Helps against hurts (lag's side against joint's), the opposition every verdict figure is read by, stays
far apart: a red-green pair (#2b8a3e, #c92a2a) is 16.5 apart under deuteranopia."""


@pytest.mark.parametrize("vision", DICHROMACY)
def test_helps_and_hurts_stay_far_apart(vision: str) -> None:
    helps, hurts = (lab(DICHROMACY[vision] @ linear_rgb(c)) for c in (palette.HELPS, palette.HURTS))
    assert float(np.linalg.norm(helps - hurts)) >= OPPOSITION_DELTA_E


@pytest.mark.parametrize("vision", DICHROMACY)
@pytest.mark.parametrize("colour", [palette.JOINT, palette.LAG, palette.THREE_PHASE, *palette.SERIES])
def test_shades_of_one_colour_stay_apart(colour: str, vision: str) -> None:
    seen = [lab(DICHROMACY[vision] @ linear_rgb(c)) for c in palette.shades(colour, 5)]
    for lighter, darker in itertools.pairwise(seen):
        assert float(np.linalg.norm(lighter - darker)) >= 10.0
    assert palette.shades(colour, 1) == [to_hex(colour)]


def test_shades_refuse_a_count_out_of_range() -> None:
    for count in (0, 6):
        with pytest.raises(ValueError, match="count must be 1 to 5"):
            palette.shades(palette.JOINT, count)


def test_one_meaning_per_colour() -> None:
    """Lag's side is the helps colour and joint's the hurts colour; no other role reuses them."""
    assert palette.LAG == palette.HELPS and palette.JOINT == palette.HURTS
    sides = {palette.HELPS, palette.HURTS}
    others = [*palette.SERIES, palette.THREE_PHASE, palette.SUCCEEDS, palette.FAILS, palette.EQUIVALENT]
    assert not sides & {c.upper() for c in others}
    assert palette.THREE_PHASE not in palette.SERIES  # a figure draws three-phase beside other curves
    assert set(palette.VERDICTS) == {"helps", "hurts", "equivalent", "undetermined"}


def test_effect_map_runs_from_helps_through_paper_to_hurts() -> None:
    """A negative ``schedule - joint`` (the schedule's loss lower) is drawn in the helps colour."""
    low, middle, high = (palette.EFFECT(x)[:3] for x in (0.0, 0.5, 1.0))
    assert np.allclose(low, to_rgb(palette.HELPS))
    assert np.allclose(middle, to_rgb(palette.PAPER), atol=0.01)  # the map is a table of 256 colours
    assert np.allclose(high, to_rgb(palette.HURTS))
    assert np.allclose(palette.AMOUNT(0.0)[:3], to_rgb(palette.PAPER))


def contrast(a: str, b: str) -> float:
    """The WCAG 2 contrast ratio of two colours."""
    la, lb = (float(np.array([0.2126, 0.7152, 0.0722]) @ linear_rgb(c)) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


GREYS = [f"#{g:02X}{g:02X}{g:02X}" for g in range(256)]


@pytest.mark.parametrize("background", [*GREYS, *palette.VERDICTS.values(), *palette.SERIES, palette.NOT_ESTIMABLE])
def test_ink_on_writes_in_the_colour_of_higher_contrast(background: str) -> None:
    chosen = palette.ink_on(background)
    other = palette.PAPER if chosen == palette.INK else palette.INK
    assert contrast(chosen, background) >= contrast(other, background)


# ---------------------------------------------------------------------------------------------------------------
# Every figure takes its colours from the palette.

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))
FIGURE_MODULES = sorted(
    path
    for path in (ROOT / "lagtheory").rglob("*.py")
    if path.name != "palette.py" and re.search(r"^\s*(?:import|from) matplotlib", path.read_text(), re.M)
)
COLOUR_KEYWORDS = {
    "color",
    "c",
    "colors",
    "facecolor",
    "facecolors",
    "edgecolor",
    "edgecolors",
    "fc",
    "ec",
    "mec",
    "mfc",
    "markeredgecolor",
    "markerfacecolor",
    "ecolor",
    "cmap",
}
# Calls that draw marks in a colour of their own; each must be given one (else matplotlib's default cycle
# or colour map decides it).
DRAWING = {
    "plot",
    "semilogx",
    "semilogy",
    "loglog",
    "step",
    "errorbar",
    "fill_between",
    "fill_betweenx",
    "axhline",
    "axvline",
    "axhspan",
    "axvspan",
    "scatter",
    "bar",
    "barh",
    "hist",
    "imshow",
    "pcolormesh",
    "pcolor",
    "contour",
    "contourf",
    "Rectangle",
    "Patch",
    "Line2D",
}
# Calls whose positional string arguments are format strings ("k-", "C0o"): a colour letter there is a colour.
FORMATTED = {"plot", "semilogx", "semilogy", "loglog", "errorbar"}
FORMAT_COLOUR = re.compile(r"[bgrcmykw]|C\d")
LITERAL = re.compile(r"^(?:#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?|(?:tab|xkcd):.+)$")


def called_name(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def colour_problems(source: str) -> list[str]:
    """Colours in ``source`` that do not come from the palette: literals, and drawing calls given none."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and LITERAL.match(node.value):
            problems.append(f"line {node.lineno}: colour literal {node.value!r}")
        if not isinstance(node, ast.Call):
            continue
        name = called_name(node)
        for keyword in node.keywords:
            if keyword.arg in COLOUR_KEYWORDS and any(
                isinstance(part, ast.Constant) and isinstance(part.value, str) for part in ast.walk(keyword.value)
            ):
                problems.append(f"line {node.lineno}: {name}({keyword.arg}=...) given a literal colour")
        formats = [*node.args[1:], *(k.value for k in node.keywords if k.arg == "fmt")] if name in FORMATTED else []
        for argument in formats:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                if FORMAT_COLOUR.search(argument.value):
                    problems.append(f"line {node.lineno}: {name} format string {argument.value!r} names a colour")
        # (a drawing call is given data; a call without arguments, like an optimiser's step(), is not one)
        if name in DRAWING and node.args and not any(keyword.arg in COLOUR_KEYWORDS for keyword in node.keywords):
            problems.append(f"line {node.lineno}: {name}(...) drawn in matplotlib's default colour")
    return problems


def python_of(cell: nbformat.NotebookNode) -> str:
    """A code cell's Python (IPython magics and shell lines left out)."""
    return "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))


def draws(cell: nbformat.NotebookNode) -> bool:
    return any("image/png" in output.get("data", {}) for output in cell.get("outputs", []))


FIGURE_FUNCTIONS = {
    node.name
    for module in FIGURE_MODULES
    for node in ast.parse(module.read_text()).body
    if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
}
PALETTE_NAMES = {name for name in dir(palette) if not name.startswith("_")}


def takes_the_palette(source: str) -> bool:
    """Whether ``source`` reads a name of lagtheory.palette (``palette.SERIES``) or calls a figure module's
    function (which the module test below holds to the palette)."""
    nodes = list(ast.walk(ast.parse(source)))
    reads = any(
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "palette"
        and node.attr in PALETTE_NAMES
        for node in nodes
    )
    return reads or bool({called_name(node) for node in nodes if isinstance(node, ast.Call)} & FIGURE_FUNCTIONS)


ADOPTED_BY_OWNERS: dict[str, str] = {}


def chapter_params() -> list:
    params = []
    for chapter in CHAPTERS:
        marks = (
            [pytest.mark.xfail(strict=True, reason=ADOPTED_BY_OWNERS[chapter.stem])]
            if chapter.stem in ADOPTED_BY_OWNERS
            else []
        )
        params.append(pytest.param(chapter, id=chapter.stem, marks=marks))
    return params


@pytest.mark.parametrize("chapter", chapter_params())
def test_every_figure_cell_takes_the_palette(chapter: Path) -> None:
    """Every code cell is free of colour literals; every cell that draws a figure names the palette or
    calls a figure module's function, and gives each mark it draws a colour."""
    problems = []
    for number, cell in enumerate(nbformat.read(chapter, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        source = python_of(cell)
        found = colour_problems(source)
        if draws(cell) and not takes_the_palette(source):
            found.append("draws a figure but takes nothing from lagtheory.palette nor calls a figure module")
        problems += [f"cell {number}: {problem}" for problem in found]
    assert not problems, f"{chapter.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("module", FIGURE_MODULES, ids=lambda path: path.stem)
def test_every_figure_module_takes_the_palette(module: Path) -> None:
    source = module.read_text()
    problems = colour_problems(source)
    if not re.search(r"^from (?:lagtheory|\.+) import (?:.*\b)?palette\b", source, re.M):
        problems.append("does not import lagtheory.palette")
    assert not problems, f"{module.name}:\n" + "\n".join(problems)


PRINTED_TEXT_WIDTH = 6.5
"""Inches a figure is printed at in the PDF when it is wider (Sphinx's LaTeX text width on letter paper)."""
SMALLEST_PRINTED_POINTS = 7.0
TALLEST_PRINTED_INCHES = 7.5
"""A figure printed taller than this leaves no room on the page for a caption of five lines (the text is
about 8.5 in high): LaTeX then runs the caption into the page's foot."""


def palette_rgb() -> set[tuple[float, ...]]:
    names = [getattr(palette, name) for name in PALETTE_NAMES]
    colours = [c for c in names if isinstance(c, str) and c.startswith("#")]
    colours += [
        c
        for group in names
        if isinstance(group, tuple | dict)
        for c in (group.values() if isinstance(group, dict) else group)
    ]
    return {tuple(round(x, 4) for x in to_rgb(c)) for c in colours}


def drawn_colours(fig) -> list[tuple[str, tuple[float, ...]]]:
    """Every colour the figure's own artists are drawn in (not the axes' frame and ticks)."""
    found = []
    for ax in fig.axes:
        for line in ax.lines:
            found.append(("line", to_rgb(line.get_color())))
        for patch in ax.patches:
            if patch.get_fill():
                found.append(("patch face", to_rgb(patch.get_facecolor())))
            found.append(("patch edge", to_rgb(patch.get_edgecolor())))
        for collection in ax.collections:
            if collection.get_array() is not None:  # coloured by a colour map (the colour bar's)
                found.append(("colour map " + collection.get_cmap().name, to_rgb(collection.get_cmap()(0.0))))
            else:
                found += [("collection", tuple(rgba[:3])) for rgba in collection.get_facecolors()]
        for text in ax.texts:
            found.append(("text", to_rgb(text.get_color())))
    return found


@pytest.mark.parametrize("study", ["languages", "icl"])
def test_the_heat_maps_take_the_palette_and_print_legibly_on_one_page(study: str) -> None:
    import json

    import matplotlib.pyplot as plt

    from lagtheory.experiments.exploratory import figures

    record = json.loads((ROOT / "book" / "data" / f"summary_{study}.json").read_text())
    fig = figures.heat_maps(record, "lag", limit=1.0)
    allowed = palette_rgb()
    strays = {f"{kind} {c}" for kind, c in drawn_colours(fig) if tuple(round(x, 4) for x in c) not in allowed}
    assert not strays, strays
    images = [image for ax in fig.axes for image in ax.images]
    assert images and all(image.get_cmap() is palette.EFFECT for image in images)
    scale = min(1.0, PRINTED_TEXT_WIDTH / fig.get_figwidth())
    smallest = min(text.get_fontsize() for ax in fig.axes for text in ax.texts) * scale
    tall = fig.get_figheight() * scale
    plt.close(fig)
    assert smallest >= SMALLEST_PRINTED_POINTS, f"cell values print at {smallest:.1f} pt"
    assert tall <= TALLEST_PRINTED_INCHES, f"the figure prints {tall:.2f} in tall"


def test_the_budget_curves_take_the_palette() -> None:
    import json

    import matplotlib.pyplot as plt

    from lagtheory.experiments.exploratory import figures

    record = json.loads((ROOT / "book" / "data" / "summary_languages.json").read_text())
    fig, ax = plt.subplots()
    figures.budget_curves(ax, record, "lag", "sgd")
    allowed = palette_rgb()
    strays = {f"{kind} {c}" for kind, c in drawn_colours(fig) if tuple(round(x, 4) for x in c) not in allowed}
    styles = {(line.get_color(), line.get_linestyle(), line.get_marker()) for line in ax.lines}
    plt.close(fig)
    assert not strays, strays
    assert len(styles) == len(ax.lines)  # six tasks, six distinct lines


@pytest.mark.parametrize("outcome", ["failure", "recognition"])
def test_the_verdicts_step_size_figures_print_on_one_page(outcome: str) -> None:
    """The verdict chapter draws step_size_grid for every confirmatory task (failure) and for its languages
    (recognition); printed at the PDF's text width, each figure must leave room for its caption on the page
    (in one column, nine tasks printed 12.7 in tall and LaTeX reported the float too large by 48 pt)."""
    import matplotlib.pyplot as plt

    from lagtheory.experiments.confirmatory import figures
    from lagtheory.experiments.confirmatory.design import confirmatory_tasks
    from lagtheory.training import OPTIMISERS

    tasks = [design.name for study, design in confirmatory_tasks() if outcome == "failure" or study == "languages"]
    rates = [0.01, 0.1, 1.0]
    curve = {
        "rates": rates,
        "calibrated": [0.1],
        "best_joint": [0.1],
        "best_lag": [0.1],
        outcome: {"joint": [0.2, 0.1, 0.5], "lag": [0.1, 0.1, 0.4], "interval": [[-0.2, 0.0]] * len(rates)},
    }
    fig = figures.step_size_grid({(t, o): curve for t in tasks for o in OPTIMISERS}, tasks, OPTIMISERS, outcome)
    scale = min(1.0, PRINTED_TEXT_WIDTH / fig.get_figwidth())
    tall = fig.get_figheight() * scale
    titles = sorted(ax.get_title().replace(",\n", ", ") for ax in fig.axes if ax.axison)  # long names break
    strays = {f"{kind} {c}" for kind, c in drawn_colours(fig) if tuple(round(x, 4) for x in c) not in palette_rgb()}
    plt.close(fig)
    assert titles == sorted(f"{t}, {figures.OPTIMISER_NAMES[o]}" for t in tasks for o in OPTIMISERS)
    assert not strays, strays
    assert tall <= TALLEST_PRINTED_INCHES, f"{len(tasks)} tasks: the figure prints {tall:.2f} in tall"
