"""The training configuration of a cell (:class:`TrainingConfig`: the knobs of a study) and the JSON form of it
and of every other frozen dataclass a record stores (:func:`config_to_dict`, :func:`config_from_dict`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lagtheory._validation import check_integer, check_positive
from lagtheory.schedules import ScheduleSettings
from lagtheory.training import OPTIMISERS

ATTENTION_INITS = ("zero", "random", "preset")
GROUPS = ("attention", "output")


@dataclass(frozen=True, kw_only=True)
class TrainingConfig(ScheduleSettings):
    """How every schedule of a cell is trained: the :class:`~lagtheory.schedules.ScheduleSettings`
    of the named schedules (``steps`` the budget T, counted by ``accounting``: "total", every
    schedule T steps in all; "joint", the last phase T steps after any warm-up), and, given by
    keyword, ``batch_size`` examples per step; ``optimiser`` "sgd" or "adam"; the output group
    starts i.i.d. N(0, output_scale^2), the attention at 0 (``attention_init="zero"``), i.i.d.
    N(0, attention_scale^2) ("random") or at the task's preset value ("preset"; the readout is
    still drawn fresh).

    Attributes
    ----------
    steps, attention_lr, output_lr, warm_steps, big_step, first_output_step, accounting
        As in :class:`~lagtheory.schedules.ScheduleSettings` (``steps`` and ``warm_steps``
        integers >= 1, step sizes finite and > 0, ``accounting`` "total" or "joint").
    batch_size : int
        Examples per step, an integer >= 1.
    optimiser : {"sgd", "adam"}, optional
        torch's SGD or Adam.
    output_scale : float, optional
        The standard deviation of the output group's initial draws, finite and > 0.
    attention_init : {"zero", "random", "preset"}, optional
        The attention's initial value: 0, i.i.d. N(0, attention_scale^2), or the task's preset.
    attention_scale : float, optional
        The standard deviation of ``"random"`` attention draws, finite and > 0.

    Raises
    ------
    ValueError
        If a field is out of the range above (or of those of ``ScheduleSettings``).
    TypeError
        If an integer or number field has the wrong type.
    """

    batch_size: int
    optimiser: str = "sgd"
    output_scale: float = 0.1
    attention_init: str = "zero"
    attention_scale: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_integer(self.batch_size, "batch_size", minimum=1)
        if self.optimiser not in OPTIMISERS:
            raise ValueError(f"optimiser must be one of {OPTIMISERS}, got {self.optimiser!r}")
        check_positive(self.output_scale, "output_scale")
        check_positive(self.attention_scale, "attention_scale")
        if self.attention_init not in ATTENTION_INITS:
            raise ValueError(f"attention_init must be one of {ATTENTION_INITS}, got {self.attention_init!r}")


def config_to_dict(config: Any) -> dict[str, Any]:
    """A frozen dataclass as a JSON-ready dict (tuples become lists).

    Parameters
    ----------
    config : object
        A dataclass instance.

    Returns
    -------
    dict
        Its fields, JSON-ready.
    """
    return json_ready(dataclasses.asdict(config))


def config_from_dict(kind: type, values: Mapping[str, Any]) -> Any:
    """The dataclass ``kind`` from :func:`config_to_dict`'s output (lists become tuples).

    Parameters
    ----------
    kind : type
        The dataclass.
    values : mapping
        Its fields, as :func:`config_to_dict` gives them.

    Returns
    -------
    object
        The ``kind`` instance (which checks its fields as its constructor does).
    """
    return kind(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})


def json_ready(value: Any) -> Any:
    """Tuples and numpy values as JSON-ready lists and Python numbers.

    Parameters
    ----------
    value : object
        Nested dicts, lists, tuples, numpy arrays and scalars; anything else is kept.

    Returns
    -------
    object
        The same structure with lists and Python numbers.
    """
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value
