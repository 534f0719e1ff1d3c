"""Statements certified on whole boxes of parameters, by bisection (branch and bound) in balls.

A statement about every point of a box (an interval of t, a rectangle of the complex plane) is
decided on the ball that contains the whole box: evaluated there, a ball comparison that holds
holds at every point. Where it is not decided (the box is too wide for the ball to be tight),
the box is cut in two along its longest side, and each half is decided in turn. The box's ends
are exact numbers (:class:`fractions.Fraction`), so the halves cover it exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .balls import Number, interval

Box = tuple[tuple[Fraction, Fraction], ...]


@dataclass(frozen=True)
class Cover:
    """How :func:`~lagtheory.certified.boxes.cover` decided a statement on a box.

    Attributes
    ----------
    boxes : int
        The boxes on which the statement was decided (they partition the box).
    evaluations : int
        Every box evaluated, decided or cut.
    narrowest : Fraction
        The smallest side (in the units of ``scale``) among the boxes decided.
    """

    boxes: int
    evaluations: int
    narrowest: Fraction


def cover(
    decide: Callable[[tuple[arb, ...], Box], bool | None],
    box: Sequence[tuple[Number, Number]],
    *,
    scale: Sequence[Number] | None = None,
    max_boxes: int = 100_000,
) -> Cover:
    """Decide ``decide`` on every point of ``box`` by bisection.

    Parameters
    ----------
    decide : callable
        ``decide(balls, box)``, with ``balls`` the intervals of the box as balls (one per side) and
        ``box`` its exact ends: True when the statement holds on the whole box, False when it is
        proved false somewhere on it, None when it is not decided (the box is then cut).
    box : sequence of (low, high)
        The box, one pair of exact numbers (int, Fraction or float) per dimension, low <= high.
    scale : sequence of numbers, optional
        The weight of each side when choosing the longest (1 each by default): a box is cut across
        the side with the largest ``(high - low) * scale``.
    max_boxes : int, optional
        The most boxes evaluated (100000 by default).

    Returns
    -------
    Cover
        The number of boxes decided, of boxes evaluated and the narrowest side.

    Raises
    ------
    ValueError
        If ``decide`` returns False (naming the box), or the statement is not decided within
        ``max_boxes`` evaluations.
    """
    start = tuple((Fraction(low), Fraction(high)) for low, high in box)
    weights = tuple(Fraction(value) for value in (scale if scale is not None else [1] * len(start)))
    if len(weights) != len(start) or any(low > high for low, high in start):
        raise ValueError("box must be pairs low <= high, one weight per side in scale")
    queue, decided, evaluated, narrowest = [start], 0, 0, None
    while queue:
        current = queue.pop()
        evaluated += 1
        if evaluated > max_boxes:
            raise ValueError(f"not decided within max_boxes = {max_boxes} boxes (last: {_shown(current)})")
        verdict = decide(tuple(interval(low, high) for low, high in current), current)
        if verdict is False:
            raise ValueError(f"the statement is false on the box {_shown(current)}")
        sides = [(high - low) * weight for (low, high), weight in zip(current, weights, strict=True)]
        if verdict is True:
            decided += 1
            smallest = min(sides)
            narrowest = smallest if narrowest is None else min(narrowest, smallest)
            continue
        longest = max(range(len(current)), key=sides.__getitem__)
        low, high = current[longest]
        middle = (low + high) / 2
        for half in ((low, middle), (middle, high)):
            queue.append((*current[:longest], half, *current[longest + 1 :]))
    return Cover(decided, evaluated, narrowest)


def _shown(box: Box) -> str:
    return " x ".join(f"[{float(low):.17g}, {float(high):.17g}]" for low, high in box)
