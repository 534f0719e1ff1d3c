"""The verdict chapter's figures of the confirmatory records, in the book's palette (``lagtheory.palette``).

* :func:`verdict_grid`: one registered outcome in every cell, rows the tasks, columns the regimes, one panel per
  optimiser; the colour is the verdict, the text the effect;
* :func:`step_size_grid`: joint's and lag's rate of an outcome against the base rate, one panel per task and
  optimiser (:func:`lagtheory.experiments.confirmatory.step_size.step_size_curves`), with lag's points carrying
  joint's rate plus the paired interval of the difference, the calibrated rates as dotted lines and each
  schedule's tuned rates as triangles.

Both are at most :data:`WIDTH_INCHES` wide with type of :data:`SMALLEST_TYPE` points or more, so that the PDF
prints their smallest text at 8.4 pt or more and a phone shows it at 6 px or more
(``lagtheory.palette.shown_text_sizes``; they were 9.5 and 8.5 in wide with 8- and 8.5-pt type: 5.7 pt and
4.2 px).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from lagtheory import palette

VERDICT_COLOURS = {
    "helps": palette.HELPS,
    "hurts": palette.HURTS,
    "equivalent": palette.EQUIVALENT,
    "undetermined": palette.UNDETERMINED,
    "not estimable": palette.NOT_ESTIMABLE,
    "neither": palette.NOT_ESTIMABLE,
}
"""The colour of each registered verdict; "neither" (no window for either schedule) is drawn as not estimable."""
VERDICT_LABELS = {
    "helps": "lag better",
    "hurts": "joint better",
    "equivalent": "shown equivalent",
    "undetermined": "not determined",
    "not estimable": "not estimable",
}
"""The legend's words for the verdicts."""
OPTIMISER_NAMES = {"sgd": "SGD", "adam": "Adam"}
"""How the panels name the optimisers."""
WIDTH_INCHES = 6.8
"""The figures' width."""
SMALLEST_TYPE = 9
"""Points of the smallest type the figures write (cell values, ticks, axis labels, legends)."""


def verdict_grid(
    verdicts: Sequence[Sequence[Sequence[Mapping[str, Any]]]],
    tasks: Sequence[str],
    optimisers: Sequence[str],
    regimes: Sequence[str],
    label: Callable[[Mapping[str, Any]], str],
    legend: Sequence[str],
) -> Figure:
    """One outcome in every cell: ``verdicts[o][t][r]`` is the registered entry (its ``verdict`` and effect) of
    optimiser ``o``, task ``t`` and regime ``r``; each cell is coloured by its verdict and shows ``label(entry)``.

    Parameters
    ----------
    verdicts : sequence of sequence of sequence of mapping
        Per optimiser, per task, per regime, an entry with a ``verdict`` key of :data:`VERDICT_COLOURS`.
    tasks : sequence of str
        The row labels.
    optimisers : sequence of str
        The panels' optimisers, keys of :data:`OPTIMISER_NAMES`.
    regimes : sequence of str
        The column labels.
    label : callable
        The text written in a cell, from its entry.
    legend : sequence of str
        The verdicts the legend shows, keys of :data:`VERDICT_LABELS`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    order = list(VERDICT_COLOURS)
    colours = ListedColormap([VERDICT_COLOURS[v] for v in order])
    fig, axes = plt.subplots(
        1,
        len(optimisers),
        figsize=(WIDTH_INCHES, 0.36 * len(tasks) + 1.9),
        sharey=True,
        constrained_layout=True,
        squeeze=False,
    )
    for ax, optimiser, rows in zip(axes[0], optimisers, verdicts, strict=True):
        codes = np.array([[order.index(entry["verdict"]) for entry in row] for row in rows])
        ax.imshow(codes, cmap=colours, vmin=-0.5, vmax=len(order) - 0.5, aspect="auto")
        for i, row in enumerate(rows):
            for j, entry in enumerate(row):
                ink = palette.ink_on(VERDICT_COLOURS[entry["verdict"]])
                ax.text(j, i, label(entry), ha="center", va="center", fontsize=SMALLEST_TYPE, color=ink)
        ax.set_xticks(range(len(regimes)), regimes, rotation=45, fontsize=SMALLEST_TYPE)
        ax.set_xticks(np.arange(-0.5, len(regimes)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(tasks)), minor=True)
        ax.grid(which="minor", color=palette.PAPER, linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        ax.set_title(OPTIMISER_NAMES[optimiser], fontsize=11)
    axes[0][0].set_yticks(range(len(tasks)), tasks, fontsize=SMALLEST_TYPE)
    handles = [Patch(facecolor=VERDICT_COLOURS[v], edgecolor=palette.GUIDE, label=VERDICT_LABELS[v]) for v in legend]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=SMALLEST_TYPE, frameon=False)
    return fig


TITLE_CHARACTERS = 13
"""The longest task name that a panel of :func:`step_size_grid` titles on one line with its optimiser."""
TASKS_IN_ONE_COLUMN = 4
"""Up to this many tasks, :func:`step_size_grid` draws one task per row."""


def step_size_grid(
    curves: Mapping[tuple[str, str], Mapping[str, Any]], tasks: Sequence[str], optimisers: Sequence[str], outcome: str
) -> Figure:
    """Joint's and lag's rate of ``outcome`` against the base rate, one panel per task and optimiser, from
    :func:`~lagtheory.experiments.confirmatory.step_size.step_size_curves`.

    The optimisers of a task stand side by side; with more than :data:`TASKS_IN_ONE_COLUMN` tasks, two tasks
    share a row, so that the figure printed at the PDF's text width stays within a page (nine tasks in one
    column printed 12.7 in tall).

    Parameters
    ----------
    curves : mapping
        (task, optimiser) -> the curves of that task and optimiser.
    tasks : sequence of str
        The rows.
    optimisers : sequence of str
        The columns, keys of :data:`OPTIMISER_NAMES`.
    outcome : str
        "failure" or "recognition" (a key the curves hold).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    per_row = 1 if len(tasks) <= TASKS_IN_ONE_COLUMN else 2
    rows = -(-len(tasks) // per_row)
    fig, axes = plt.subplots(
        rows,
        per_row * len(optimisers),
        figsize=(WIDTH_INCHES, (1.75 if per_row == 1 else 1.38) * rows + 0.8),
        constrained_layout=True,
        squeeze=False,
    )
    for ax in axes.flat[len(tasks) * len(optimisers) :]:
        ax.set_axis_off()
    for index, task in enumerate(tasks):
        row, first_column = divmod(index, per_row)
        for offset, optimiser in enumerate(optimisers):
            column = first_column * len(optimisers) + offset
            ax = axes[row][column]
            curve = curves[(task, optimiser)]
            rates, found = np.array(curve["rates"]), curve[outcome]
            joint, lag = np.array(found["joint"]), np.array(found["lag"])
            low, high = np.array(found["interval"]).T
            for rate in curve["calibrated"]:
                ax.axvline(rate, color=palette.GUIDE, linestyle=":", linewidth=1)
            ax.plot(rates, joint, marker="o", markersize=3, color=palette.JOINT, label="joint")
            bars = [lag - (joint + low), (joint + high) - lag]
            ax.errorbar(rates, lag, yerr=bars, fmt="none", ecolor=palette.LAG, elinewidth=1)
            ax.plot(rates, lag, marker="o", markersize=3, color=palette.LAG, label="lag")
            for schedule, colour, height in (("joint", palette.JOINT, 1.13), ("lag", palette.LAG, 1.05)):
                best = list(curve[f"best_{schedule}"])
                ax.scatter(best, [height] * len(best), marker="v", s=22, color=colour, clip_on=False)
            ax.set_xscale("log")
            ax.set_ylim(-0.03, 1.17)
            ax.set_yticks([0, 0.5, 1])
            ax.tick_params(labelsize=SMALLEST_TYPE)
            # a long task name breaks its title after the comma, so that neighbouring titles do not meet
            joint_by = "\n" if len(task) > TITLE_CHARACTERS else " "
            ax.set_title(f"{task},{joint_by}{OPTIMISER_NAMES[optimiser]}", fontsize=SMALLEST_TYPE)
            if column == 0:
                ax.set_ylabel(f"{outcome} rate", fontsize=SMALLEST_TYPE)
            if index + per_row >= len(tasks):  # no panel of this column below it
                ax.set_xlabel("base rate", fontsize=SMALLEST_TYPE)
    axes[0][0].legend(fontsize=SMALLEST_TYPE, loc="center left", frameon=False)
    return fig
