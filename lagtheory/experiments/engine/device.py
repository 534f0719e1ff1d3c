"""Where a cell trains: a torch device checked to exist on this machine (:func:`check_device`), and a batch moved
there (:func:`on_device`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch


def check_device(device: str | torch.device) -> torch.device:
    """The torch device ``device``, checked to exist on this machine.

    Parameters
    ----------
    device : str or torch.device
        "cpu" or a CUDA device ("cuda", "cuda:1", ...) that this machine has.

    Returns
    -------
    torch.device
        The device.

    Raises
    ------
    ValueError
        If ``device`` is not a device name, is neither CPU nor CUDA, or is a GPU that this
        machine does not have.
    """
    try:
        checked = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda', got {device!r}") from error
    if checked.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} needs a GPU, but torch finds none here (torch.cuda.is_available() is False)"
        )
    if checked.type == "cuda" and (checked.index or 0) >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} GPU(s)")
    if checked.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or a 'cuda' device, got {device!r}")
    return checked


def on_device(value: Any, device: torch.device) -> Any:
    """A batch with every tensor moved to ``device``.

    Parameters
    ----------
    value : object
        A tensor, or a tuple, list, dict or dataclass of them (nested); anything else is
        returned as it is.
    device : torch.device
        Where the tensors go.

    Returns
    -------
    object
        ``value`` of the same structure, its tensors on ``device``.
    """
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(on_device(item, device) for item in value)
    if isinstance(value, dict):
        return {key: on_device(item, device) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{field.name: on_device(getattr(value, field.name), device) for field in dataclasses.fields(value)}
        )
    return value
