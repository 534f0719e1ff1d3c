"""Statements certified on whole boxes of parameters, by bisection (branch and bound) in balls.

A statement about every point of a box (an interval of t, a rectangle of the complex plane) is
decided on the ball that contains the whole box: evaluated there, a ball comparison that holds
holds at every point. Where it is not decided (the box is too wide for the ball to be tight),
the box is cut in two along its longest side, and each half is decided in turn. The box's ends
are exact numbers (:class:`fractions.Fraction`), so the halves cover it exactly.

A cover records each box it decided and the balls it decided it on, and :func:`check_tiling`
proves, in exact rational arithmetic and without the bisection's own bookkeeping, that those
boxes tile the box a chapter states (no gap, no overlap, both ends of every side included) and
that each ball contains its box: a cover that skipped a box, decided a box at its midpoint or
stopped short of an end fails it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .balls import Number, ends, interval

Box = tuple[tuple[Fraction, Fraction], ...]


@dataclass(frozen=True)
class Cover:
    """How :func:`~lagtheory.certified.boxes.cover` decided a statement on a box.

    Attributes
    ----------
    evaluations : int
        Every box evaluated, decided or cut.
    narrowest : Fraction
        The smallest side (in the units of ``scale``) among the boxes decided.
    decided : tuple of Box
        The boxes on which the statement was decided, exact ends (:func:`check_tiling` proves that
        they tile the starting box).
    balls : tuple of tuple of arb
        For each box decided, the balls (one per side) that ``decide`` was given for it.
    """

    evaluations: int
    narrowest: Fraction
    decided: tuple[Box, ...]
    balls: tuple[tuple[arb, ...], ...]

    @property
    def boxes(self) -> int:
        """The number of boxes decided."""
        return len(self.decided)


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
        The boxes decided with their balls, the number of boxes evaluated and the narrowest side.

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
    queue, decided, balls_of, evaluated, narrowest = [start], [], [], 0, None
    while queue:
        current = queue.pop()
        evaluated += 1
        if evaluated > max_boxes:
            raise ValueError(f"not decided within max_boxes = {max_boxes} boxes (last: {_shown(current)})")
        balls = tuple(interval(low, high) for low, high in current)
        verdict = decide(balls, current)
        if verdict is False:
            raise ValueError(f"the statement is false on the box {_shown(current)}")
        sides = [(high - low) * weight for (low, high), weight in zip(current, weights, strict=True)]
        if verdict is True:
            decided.append(current)
            balls_of.append(balls)
            smallest = min(sides)
            narrowest = smallest if narrowest is None else min(narrowest, smallest)
            continue
        longest = max(range(len(current)), key=sides.__getitem__)
        low, high = current[longest]
        middle = (low + high) / 2
        for half in ((low, middle), (middle, high)):
            queue.append((*current[:longest], half, *current[longest + 1 :]))
    return Cover(evaluated, narrowest, tuple(decided), tuple(balls_of))


def check_tiling(covered: Cover, box: Sequence[tuple[Number, Number]]) -> int:
    """Prove that the boxes a cover decided tile ``box`` and that each was decided on balls containing it.

    In exact rational arithmetic: every ball's ends (exact binary numbers) enclose its box's side,
    every box lies in ``box``, and sweeping each side in turn, every slab between two consecutive
    ends is covered by exactly one box (none: a gap; two: an overlap), from the low end of each
    side to its high end. It uses the decided boxes only, not the bisection that produced them.

    Parameters
    ----------
    covered : Cover
        What :func:`cover` returned.
    box : sequence of (low, high)
        The box the statement is claimed on, one pair of exact numbers per side, low <= high (as
        the chapter states it, not as the cover recorded it).

    Returns
    -------
    int
        The number of boxes that tile it.

    Raises
    ------
    ValueError
        Naming the first gap, overlap, box outside ``box`` or ball not containing its box.
    """
    region = tuple((Fraction(low), Fraction(high)) for low, high in box)
    if len(covered.balls) != len(covered.decided):
        raise ValueError("a cover must record one tuple of balls per box decided")
    for current, balls in zip(covered.decided, covered.balls, strict=True):
        if len(current) != len(region) or len(balls) != len(region):
            raise ValueError(f"the box {_shown(current)} does not have the {len(region)} sides of box")
        for (low, high), ball, (region_low, region_high) in zip(current, balls, region, strict=True):
            if not region_low <= low <= high <= region_high:
                raise ValueError(f"the box {_shown(current)} is not inside {_shown(region)}")
            ball_low, ball_high = ends(ball)
            if not (ball_low <= low and high <= ball_high):
                raise ValueError(f"the box {_shown(current)} was decided on a ball {ball} that does not contain it")
    _tile(list(covered.decided), region)
    return len(covered.decided)


def _tile(boxes: list[Box], region: Box) -> None:
    """Raise unless ``boxes`` (inside ``region``) cover every point of it exactly once, up to shared faces."""
    (low, high), rest = region[0], region[1:]
    if low == high:  # a side of zero width: every box has exactly that side
        if any(current[0] != (low, high) for current in boxes):
            raise ValueError(f"a box is not the point {float(low):.17g} of a side of zero width")
        slabs = [((low, high), boxes)]
    else:
        if any(current[0][0] == current[0][1] for current in boxes):
            raise ValueError(f"a box of zero width in the side [{float(low):.17g}, {float(high):.17g}]")
        cuts = sorted({low, high, *(current[0][0] for current in boxes), *(current[0][1] for current in boxes)})
        by_low = sorted(boxes, key=lambda current: current[0][0])
        slabs, active, next_box = [], [], 0
        for left, right in itertools.pairwise(cuts):
            active = [current for current in active if current[0][1] > left]
            while next_box < len(by_low) and by_low[next_box][0][0] == left:
                active.append(by_low[next_box])
                next_box += 1
            slabs.append(((left, right), active))
    for (left, right), covering in slabs:
        if not rest:
            if len(covering) != 1:
                problem = "a gap" if not covering else f"an overlap of {len(covering)} boxes"
                raise ValueError(f"{problem} at [{float(left):.17g}, {float(right):.17g}]")
        else:
            _tile([current[1:] for current in covering], rest)


def _shown(box: Box) -> str:
    return " x ".join(f"[{float(low):.17g}, {float(high):.17g}]" for low, high in box)
