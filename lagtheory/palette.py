"""The book's one visual language: the colours every figure takes, and how large its text prints.

One meaning, one colour, in every chapter. Blue is the side of lag (and of any schedule
compared with joint): *helps*, the schedule's outcome is better than joint's, and the lag
schedule's own curves. Vermillion is the side of joint: *hurts*, joint's outcome is better,
and joint's curves. Grey says "no direction": mid grey *equivalent* (shown the same within
the margin), light grey *undetermined* (neither shown). The continuous effect
``schedule - joint`` (:data:`EFFECT`) runs from blue (the schedule's loss lower) through
white to vermillion. Every other curve takes :data:`SERIES` in order, reference curves
:data:`INK`, guide lines :data:`GUIDE`.

The hues are the Okabe-Ito set (Okabe and Ito, *Color Universal Design*, 2008), chosen to
stay apart under the common colour-vision deficiencies (protanopia, deuteranopia,
tritanopia); the neutral pair differs in lightness only.
``tests/test_palette.py`` checks that every figure of the book takes its colours from here.

Every figure's smallest text must stay legible where it is read: at least
:data:`SMALLEST_PRINTED_POINTS` in the PDF, which scales a figure wider than the text down to
:data:`PRINT_WIDTH_INCHES`, and at least :data:`SMALLEST_PHONE_PIXELS` in the HTML on a phone,
which scales it down to :data:`PHONE_COLUMN_PIXELS`. :func:`shown_text_sizes` computes both from
a figure's width and :func:`smallest_text_points`; the chapter recipe
(``book/_ext/execute_chapter.py``) stores the smallest size with every figure a cell draws
(:func:`record_text_sizes`), and ``tests/test_figure_text.py`` holds every stored figure to the bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import LinearSegmentedColormap, to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.text import Text

HELPS = "#0072B2"
"""Blue, for a schedule better than joint (lag's side)."""
HURTS = "#D55E00"
"""Vermillion, for joint better than the schedule (joint's side)."""
EQUIVALENT = "#808080"
"""Mid grey, for a difference shown to lie within the equivalence margin."""
UNDETERMINED = "#CCCCCC"
"""Light grey, where neither a difference nor equivalence is shown."""
NOT_ESTIMABLE = "#F0DC8C"
"""Sand, where no verdict can be computed (too few runs where the outcome is defined)."""

VERDICTS = {"helps": HELPS, "hurts": HURTS, "equivalent": EQUIVALENT, "undetermined": UNDETERMINED}
"""The colour of each verdict of a schedule against joint."""

JOINT = HURTS
"""Joint training's colour (its side of every comparison)."""
LAG = HELPS
"""The lag schedule's colour (its side of every comparison)."""
THREE_PHASE = "#CC79A7"
"""Reddish purple, the three-phase schedule's colour."""
SCHEDULES = {"joint": JOINT, "lag": LAG, "three-phase": THREE_PHASE}
"""The colour of each schedule that figures draw as its own curve."""

SUCCEEDS = "#009E73"
"""Bluish green, for a run that recognises (or fits) what it is asked to."""
FAILS = "#E69F00"
"""Orange, for a run that does not."""

SERIES = ("#E69F00", "#009E73", "#56B4E9")
"""Curves that are neither verdicts nor schedules (tasks, parameter values), in this order
(orange, bluish green, sky blue); more than three, or values in an order, take :func:`shades`."""
INK = "#000000"
"""Black, for text, frames, and the reference curve of a figure (a bound, the exact value)."""
GUIDE = "#7F7F7F"
"""Grey, for guide lines (zero, a threshold, a limit)."""
PAPER = "#FFFFFF"
"""White, the background and the middle of :data:`EFFECT`."""

EFFECT = LinearSegmentedColormap.from_list("lagtheory-effect", [HELPS, PAPER, HURTS])
"""Diverging map of ``schedule - joint`` (centre it at 0): blue where the schedule's value is lower."""
AMOUNT = LinearSegmentedColormap.from_list("lagtheory-amount", [PAPER, SUCCEEDS, "#00543D"])
"""Sequential map of a count or a rate of success, from white (none) to dark green (all)."""


def ink_on(background: str | tuple[float, ...]) -> str:
    """The colour to write text in on ``background``: :data:`INK` on light, :data:`PAPER` on dark.

    Parameters
    ----------
    background : str or tuple of float
        A matplotlib colour (a name, ``"#rrggbb"``, or RGB(A) values in [0, 1]).

    Returns
    -------
    str
        :data:`INK` where the background's relative luminance (WCAG 2) is above 0.179 (where black and white give the same contrast), else :data:`PAPER`.

    Examples
    --------
    >>> ink_on(UNDETERMINED) == INK, ink_on(HELPS) == PAPER
    (True, True)
    """
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(background)]
    luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    return INK if luminance > 0.179 else PAPER


def shades(colour: str, count: int) -> list[str]:
    """``count`` shades of ``colour`` from light to dark, for curves of one kind that differ by an
    ordered value (joint training from several starting points, say).

    Parameters
    ----------
    colour : str
        A matplotlib colour, usually one of this module's.
    count : int
        How many shades, 1 to 5 (more are too close to tell apart).

    Returns
    -------
    list of str
        ``"#rrggbb"`` colours from ``colour`` mixed 60% with :data:`PAPER` to ``colour`` mixed 55%
        with :data:`INK`, evenly spaced in the mixing share (``[colour]`` itself when ``count`` is 1).

    Examples
    --------
    >>> shades(HURTS, 1) == [to_hex(HURTS)], len(shades(HURTS, 4))
    (True, 4)
    """
    if not 1 <= count <= 5:
        raise ValueError(f"count must be 1 to 5, got {count}")
    base, paper, ink = (np.array(to_rgb(c)) for c in (colour, PAPER, INK))
    mixes = np.linspace(-0.6, 0.55, count) if count > 1 else np.array([0.0])
    return [to_hex((1 - abs(m)) * base + abs(m) * (paper if m < 0 else ink)) for m in mixes]


INLINE_DPI = 100
"""Pixels per inch of the PNG a notebook cell stores for a figure (matplotlib's ``figure.dpi``, which the
inline backend renders at); the HTML shows one PNG pixel per CSS pixel unless the column is narrower."""
PRINT_WIDTH_INCHES = 6.5
"""The PDF's text width (Sphinx's LaTeX page, letter paper with 1 in margins); a wider figure prints scaled
down to it (``\\sphinxincludegraphics``), a narrower one at its own size."""
PHONE_COLUMN_PIXELS = 342
"""CSS pixels a figure may take in the HTML on a 390 px wide screen (the cell output's width there,
measured by ``tests/test_rendered_book.py``): a wider figure is shown scaled down to it."""
SMALLEST_PRINTED_POINTS = 7.0
"""The smallest text a figure may print in the PDF, in points."""
SMALLEST_PHONE_PIXELS = 6.0
"""The smallest text a figure may show on a phone (390 px wide), in CSS pixels (a font's em size)."""
TEXT_SIZE_KEY = "lagtheory_smallest_text_points"
"""The key, in a PNG output's metadata, under which :func:`record_text_sizes` stores the figure's
smallest text (:func:`smallest_text_points`)."""


def smallest_text_points(fig: Figure) -> float:
    """The font size, in points, of the smallest text ``fig`` draws.

    The figure is drawn once and every text it draws is seen (tick labels, labels, titles, legends,
    annotations, colour bars); hidden and empty texts are not drawn and do not count.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, as the cell leaves it.

    Returns
    -------
    float
        The smallest font size among the drawn texts (``inf`` for a figure with no text).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_title("five", fontsize=5)
    >>> smallest_text_points(fig)
    5.0
    >>> plt.close(fig)
    """
    sizes: list[float] = []
    draw = Text.draw

    def seen(text: Text, renderer: Any) -> None:
        if text.get_visible() and text.get_text().strip():
            sizes.append(float(text.get_fontsize()))
        draw(text, renderer)

    Text.draw = seen  # type: ignore[method-assign]
    try:
        fig.canvas.draw()
    finally:
        Text.draw = draw  # type: ignore[method-assign]
    return min(sizes, default=float("inf"))


def shown_text_sizes(width_pixels: int, smallest_points: float) -> tuple[float, float]:
    """How large a figure's smallest text is where it is read: (points in the PDF, CSS pixels on a phone).

    Parameters
    ----------
    width_pixels : int
        The width of the figure's PNG (at :data:`INLINE_DPI`), at least 1.
    smallest_points : float
        Its smallest font size in points (:func:`smallest_text_points`), above 0.

    Returns
    -------
    tuple of float
        ``smallest_points * min(1, PRINT_WIDTH_INCHES / width)`` with the width in inches, and
        ``smallest_points * INLINE_DPI / 72 * min(1, PHONE_COLUMN_PIXELS / width_pixels)``.

    Examples
    --------
    >>> [round(size, 2) for size in shown_text_sizes(300, 8.0)]
    [8.0, 11.11]
    >>> [round(size, 2) for size in shown_text_sizes(1300, 8.0)]
    [4.0, 2.92]
    """
    if width_pixels < 1:
        raise ValueError(f"width_pixels must be at least 1, got {width_pixels}")
    if not smallest_points > 0:
        raise ValueError(f"smallest_points must be above 0, got {smallest_points}")
    inches = width_pixels / INLINE_DPI
    printed = smallest_points * min(1.0, PRINT_WIDTH_INCHES / inches)
    phone = smallest_points * INLINE_DPI / 72 * min(1.0, PHONE_COLUMN_PIXELS / width_pixels)
    return printed, phone


def record_text_sizes(shell: Any) -> None:
    """Make an IPython ``shell`` store each figure's smallest text with its PNG.

    The PNG of every figure a cell displays gets, in the output's metadata, ``{"image/png":
    {TEXT_SIZE_KEY: smallest_text_points(fig)}}``. The PNG itself is matplotlib's inline
    rendering, unchanged: the inline backend is switched on first (as ``%matplotlib inline`` does,
    which registers its PNG renderer), the wrapper is put around that renderer, and put back
    around whatever renders a figure as PNG after each cell, should a cell register another.

    Parameters
    ----------
    shell : InteractiveShell
        The kernel's IPython shell (``get_ipython()``).
    """
    png = shell.display_formatter.formatters["image/png"]
    shell.enable_matplotlib("inline")

    def wrap_the_renderer(*_: Any) -> None:
        try:
            render = png.lookup_by_type(Figure)
        except KeyError:  # pyplot not imported yet: nothing draws
            return
        if getattr(render, "records_text_size", False):
            return

        def render_and_measure(fig: Figure) -> tuple[Any, dict[str, float]]:
            data = render(fig)
            return data, {TEXT_SIZE_KEY: smallest_text_points(fig)}

        render_and_measure.records_text_size = True  # type: ignore[attr-defined]
        png.for_type(Figure, render_and_measure)

    wrap_the_renderer()
    shell.events.register("post_execute", wrap_the_renderer)
