"""The book's one visual language: the colours every figure takes.

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
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import LinearSegmentedColormap, to_hex, to_rgb

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
