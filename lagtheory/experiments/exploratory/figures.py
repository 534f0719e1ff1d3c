"""The figures of the empirical chapters, drawn from the analysis of a study record
(:mod:`lagtheory.experiments.exploratory.regimes`): heat maps of ``schedule - joint`` over the main grid, and
the effect against the step budget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle
from numpy.typing import NDArray

from .design import CENTRE, OPTIMISERS, centre_name
from .regimes import effect, grid, regime_map, tasks_of


def draw_grid(ax: Axes, record: Mapping[str, Any], arrays: Mapping[str, NDArray], limit: float, title: str) -> Any:
    """One heat map of schedule - joint over readout scale (rows) and ratio (columns): the effect in colour
    (blue: the schedule's held-out loss lower), its value written in the cell, a black frame where the
    95% interval excludes 0, and the Holm verdict as a letter (+ helps, - hurts, = equivalent).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    record : mapping
        A study record.
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
    image = ax.imshow(np.clip(arrays["effect"], -limit, limit), cmap="RdBu_r", norm=norm, origin="lower", aspect="auto")
    letters = {"helps": "+", "hurts": "\u2212", "equivalent": "=", "undetermined": ""}
    for i in range(len(scales)):
        for j in range(len(ratios)):
            value = arrays["effect"][i, j]
            strong = abs(value) > 0.6 * limit
            _ = ax.text(
                j,
                i,
                f"{value:+.2f}{letters[arrays['verdict'][i, j]]}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if strong else "black",
            )
            if arrays["low"][i, j] > 0 or arrays["high"][i, j] < 0:
                _ = ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
    centre = (scales.index(CENTRE[0]), ratios.index(CENTRE[1]))
    _ = ax.add_patch(
        Rectangle((centre[1] - 0.5, centre[0] - 0.5), 1, 1, fill=False, edgecolor="gold", linewidth=2.5, linestyle="--")
    )
    _ = ax.set_xticks(range(len(ratios)), [f"{r:g}" for r in ratios], fontsize=8)
    _ = ax.set_yticks(range(len(scales)), [f"{s:g}" for s in scales], fontsize=8)
    _ = ax.set_title(title, fontsize=9)
    return image


def heat_maps(record: Mapping[str, Any], schedule: str, limit: float | None = None) -> plt.Figure:
    """The heat maps of ``schedule - joint`` for every task (columns) and optimiser (rows) of a record.

    Parameters
    ----------
    record : mapping
        A study record.
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
    fig, axes = plt.subplots(
        len(OPTIMISERS), len(tasks), figsize=(2.9 * len(tasks) + 1.2, 5.4), squeeze=False, constrained_layout=True
    )
    image = None
    for column, task in enumerate(tasks):
        for row, optimiser in enumerate(OPTIMISERS):
            image = draw_grid(axes[row, column], record, arrays[(task, optimiser)], limit, f"{task}, {optimiser}")
            if column == 0:
                _ = axes[row, column].set_ylabel("readout init scale")
            if row == len(OPTIMISERS) - 1:
                _ = axes[row, column].set_xlabel("attention/output lr ratio")
    _ = fig.colorbar(image, ax=axes, shrink=0.8, label=f"{schedule} - joint, log10 held-out loss")
    return fig


def budget_curves(ax: Axes, record: Mapping[str, Any], schedule: str, optimiser: str) -> None:
    """``schedule - joint`` against the step budget (T/4 .. 4T, the centre at T) for every task, with the
    95% interval as a band.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    record : mapping
        A study record.
    schedule : str
        The schedule compared with joint.
    optimiser : str
        The optimiser.
    """
    budgets = [*record["design"]["budgets"], 1.0]
    order = np.argsort(budgets)
    for task in tasks_of(record):
        family = regime_map(record, task, optimiser, schedule)
        names = [f"{task}/{optimiser}/budget/T*{factor:g}" for factor in record["design"]["budgets"]]
        names.append(centre_name(task, optimiser))
        values = np.array([effect(record, family[name]) for name in names])[order]
        x = np.array(budgets)[order]
        (line,) = ax.plot(x, values[:, 0], "o-", label=task, lw=1.5, ms=4)
        _ = ax.fill_between(x, values[:, 1], values[:, 2], color=line.get_color(), alpha=0.15)
    _ = ax.axhline(0.0, color="black", lw=0.8)
    _ = ax.set_xscale("log", base=2)
    _ = ax.set_xticks([0.25, 0.5, 1, 2, 4], ["T/4", "T/2", "T", "2T", "4T"])
    _ = ax.set(xlabel="step budget", ylabel=f"{schedule} - joint, log10 held-out loss", title=f"{optimiser}")
