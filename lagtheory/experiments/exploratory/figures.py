"""The figures of the empirical chapters, drawn from the analysis of a study record
(:mod:`lagtheory.experiments.exploratory.regimes`): heat maps of ``schedule - joint`` over the main grid, and
the effect against the step budget. Their colours are the book's palette (:mod:`lagtheory.palette`), and their
type is sized to stay legible where they are read: at least 7 pt when a page of the PDF prints them at its text
width (6.5 in) and 6 px on a phone (``lagtheory.palette.shown_text_sizes``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle
from numpy.typing import NDArray

from lagtheory import palette
from lagtheory.training import OPTIMISERS

from ..parameters import fill_doc
from .design import CENTRE, centre_name
from .regimes import effect, grid, regime_map, tasks_of

VALUE_SIZE = 10
"""Points of the numbers written in a heat map's cells and of its labels; :func:`heat_maps` keeps its figures
at most :data:`PANELS_PER_ROW` panels wide (7.6 in), so that the PDF prints them at 8.5 pt and a phone shows
them at 6.2 px (``lagtheory.palette.shown_text_sizes``)."""
PANELS_PER_ROW = 3
"""Heat-map panels side by side; more tasks wrap onto further rows."""
PANEL_INCHES = (2.5, 2.0)
"""Width and height of one heat-map panel (5 x 5 cells, ticks, title); the colour bar lies below them all."""
BUDGET_INCHES = (6.0, 2.7)
"""Width and height of one panel of :func:`budget_figure`; its panels stand one below the other."""
LEGEND_SIZE = 9
"""Points of a legend's entries (the tick labels take matplotlib's 10)."""


@fill_doc
def draw_grid(ax: Axes, record: Mapping[str, Any], arrays: Mapping[str, NDArray], limit: float, title: str) -> Any:
    """One heat map of schedule - joint over readout scale (rows) and ratio (columns): the effect in the
    palette's :data:`~lagtheory.palette.EFFECT` colours (blue: the schedule's held-out loss lower), its value
    written in the cell (two decimals, no leading zero: ``+.26``), a frame where the 95% interval excludes 0, the Holm verdict as a sign
    (+ helps, - hurts, = equivalent), and the centre's readout scale and ratio in bold.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    %(record)s
    arrays : mapping of str to ndarray
        :func:`~lagtheory.experiments.exploratory.regimes.grid` of a regime map.
    limit : float
        The colour scale's half-range, > 0.
    title : str
        The panel's title.

    Returns
    -------
    matplotlib.image.AxesImage
        The image, for a colour bar.
    """
    scales, ratios = record["design"]["readout_scales"], record["design"]["ratios"]
    norm = TwoSlopeNorm(vmin=-limit, vcenter=0.0, vmax=limit)
    image = ax.imshow(
        np.clip(arrays["effect"], -limit, limit), cmap=palette.EFFECT, norm=norm, origin="lower", aspect="auto"
    )
    letters = {"helps": "+", "hurts": "\u2212", "equivalent": "=", "undetermined": ""}
    for i in range(len(scales)):
        for j in range(len(ratios)):
            value = arrays["effect"][i, j]
            _ = ax.text(
                j,
                i,
                f"{value:+.2f}".replace("0.", ".", 1) + letters[arrays["verdict"][i, j]],  # +.26, -1.15
                ha="center",
                va="center",
                fontsize=VALUE_SIZE,
                color=palette.ink_on(palette.EFFECT(norm(np.clip(value, -limit, limit)))),
            )
            if arrays["low"][i, j] > 0 or arrays["high"][i, j] < 0:
                _ = ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=palette.INK, linewidth=1.5))
    _ = ax.set_xticks(range(len(ratios)), [f"{r:g}" for r in ratios], fontsize=VALUE_SIZE)
    _ = ax.set_yticks(range(len(scales)), [f"{s:g}" for s in scales], fontsize=VALUE_SIZE)
    ax.get_xticklabels()[ratios.index(CENTRE[1])].set_fontweight("bold")
    ax.get_yticklabels()[scales.index(CENTRE[0])].set_fontweight("bold")
    _ = ax.set_title(title, fontsize=VALUE_SIZE + 1)
    return image


@fill_doc
def heat_maps(record: Mapping[str, Any], schedule: str, limit: float | None = None) -> plt.Figure:
    """The heat maps of ``schedule - joint`` for every task and optimiser of a record: the optimisers'
    panels one below the other, each optimiser's tasks side by side, :data:`PANELS_PER_ROW` to a row.

    Parameters
    ----------
    %(record)s
    schedule : str
        The schedule compared with joint.
    limit : float, optional
        The colour scale's half-range (default the largest effect, at least 0.05).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    tasks = tasks_of(record)
    arrays = {
        (task, optimiser): grid(record, regime_map(record, task, optimiser, schedule), task, optimiser)
        for task in tasks
        for optimiser in OPTIMISERS
    }
    if limit is None:
        limit = max(0.05, float(np.nanmax([np.nanmax(np.abs(a["effect"])) for a in arrays.values()])))
    columns = min(len(tasks), PANELS_PER_ROW)
    rows_per_optimiser = -(-len(tasks) // columns)
    rows = rows_per_optimiser * len(OPTIMISERS)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(PANEL_INCHES[0] * columns, PANEL_INCHES[1] * rows + 0.6),
        squeeze=False,
        constrained_layout=True,
    )
    image = None
    for number, optimiser in enumerate(OPTIMISERS):
        for k, task in enumerate(tasks):
            row, column = number * rows_per_optimiser + k // columns, k % columns
            ax = axes[row, column]
            image = draw_grid(ax, record, arrays[(task, optimiser)], limit, f"{task}, {optimiser}")
            if column == 0:
                _ = ax.set_ylabel("readout init scale", fontsize=VALUE_SIZE)
            if row == rows - 1 or (number == len(OPTIMISERS) - 1 and k + columns >= len(tasks)):
                _ = ax.set_xlabel("attention/output lr ratio", fontsize=VALUE_SIZE)
        for k in range(len(tasks), rows_per_optimiser * columns):  # an optimiser's last row, if not full
            axes[number * rows_per_optimiser + k // columns, k % columns].set_axis_off()
    bar = fig.colorbar(image, ax=axes, location="bottom", shrink=0.6, aspect=40)
    bar.set_label(f"{schedule} - joint, log10 held-out loss", fontsize=VALUE_SIZE)
    return fig


@fill_doc
def budget_curves(ax: Axes, record: Mapping[str, Any], schedule: str, optimiser: str) -> None:
    """``schedule - joint`` against the step budget (T/4 .. 4T, the centre at T) for every task, with the
    95% interval as a band.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    %(record)s
    schedule : str
        The schedule compared with joint.
    %(optimiser)s
    """
    budgets = [*record["design"]["budgets"], 1.0]
    order = np.argsort(budgets)
    for number, task in enumerate(tasks_of(record)):
        family = regime_map(record, task, optimiser, schedule)
        names = [f"{task}/{optimiser}/budget/T*{factor:g}" for factor in record["design"]["budgets"]]
        names.append(centre_name(task, optimiser))
        values = np.array([effect(record, family[name]) for name in names])[order]
        x = np.array(budgets)[order]
        # the palette's series colours; a fourth task and on repeat them dashed, with their own markers
        colour = palette.SERIES[number % len(palette.SERIES)]
        style = ("-", "--", ":")[number // len(palette.SERIES) % 3]
        _ = ax.plot(
            x, values[:, 0], marker="osD^v<>p"[number % 8], linestyle=style, color=colour, label=task, lw=1.5, ms=4
        )
        _ = ax.fill_between(x, values[:, 1], values[:, 2], color=colour, alpha=0.15)
    _ = ax.axhline(0.0, color=palette.GUIDE, lw=0.8)
    _ = ax.set_xscale("log", base=2)
    _ = ax.set_xticks([0.25, 0.5, 1, 2, 4], ["T/4", "T/2", "T", "2T", "4T"])
    _ = ax.set(xlabel="step budget", ylabel=f"{schedule} - joint, log10 held-out loss", title=f"{optimiser}")


@fill_doc
def budget_figure(record: Mapping[str, Any], schedule: str) -> plt.Figure:
    """:func:`budget_curves` for every optimiser of a record, one panel below the other (the optimisers share
    the step-budget axis), the tasks' legend below them (when there are several).

    Parameters
    ----------
    %(record)s
    schedule : str
        The schedule compared with joint.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, :data:`BUDGET_INCHES` per panel: 6 in wide, so that the PDF prints it at its own size and
        a phone shows its 9-pt legend at 7 px.
    """
    fig, axes = plt.subplots(
        len(OPTIMISERS),
        1,
        figsize=(BUDGET_INCHES[0], BUDGET_INCHES[1] * len(OPTIMISERS)),
        sharex=True,
        squeeze=False,
        constrained_layout=True,
    )
    for ax, optimiser in zip(axes[:, 0], OPTIMISERS, strict=True):
        budget_curves(ax, record, schedule, optimiser)
    for ax in axes[:-1, 0]:
        _ = ax.set_xlabel("")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if len(labels) > 1:  # one task (regression) needs no key
        _ = fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=LEGEND_SIZE, frameon=False)
    return fig
