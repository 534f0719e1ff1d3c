"""The book's one palette (lagtheory.palette): colour-blind safe, one meaning per colour."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.colors import to_rgb

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


def test_one_meaning_per_colour() -> None:
    """Lag's side is the helps colour and joint's the hurts colour; no other role reuses them."""
    assert palette.LAG == palette.HELPS and palette.JOINT == palette.HURTS
    sides = {palette.HELPS, palette.HURTS}
    others = [*palette.SERIES, palette.THREE_PHASE, palette.SUCCEEDS, palette.FAILS, palette.EQUIVALENT]
    assert not sides & {c.upper() for c in others}
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
