"""A pytest plugin (``-p kernel_start_lock`` in pytest.ini) that starts nbval's kernels one at a time.

Under pytest-xdist two workers may start a notebook's kernel at the same moment, and jupyter_client can
then give both kernels the same free TCP port: one kernel cannot bind it and dies ("Kernel died before
replying to kernel_info"; jupyter/jupyter_client#487). A fresh-clone CI run of this book met it once, in
the second floating-point path. Holding an exclusive lock on a file in the temporary directory from the
kernel's start until it answers makes the start-ups take turns; the notebooks still run in parallel.
"""

from __future__ import annotations

import fcntl
import tempfile
from pathlib import Path
from typing import Any

import nbval.kernel

LOCK = Path(tempfile.gettempdir()) / "lagtheory-nbval-kernel-start.lock"
"""The file whose lock the kernel start-ups take in turn (every worker of every run on this machine)."""

_start_new_kernel = nbval.kernel.start_new_kernel


def start_new_kernel_in_turn(*args: Any, **kwargs: Any) -> Any:
    """nbval's ``start_new_kernel`` while holding :data:`LOCK` (the kernel has bound its ports when it answers).

    Parameters
    ----------
    *args, **kwargs
        Passed on to ``nbval.kernel.start_new_kernel``.

    Returns
    -------
    tuple
        Its (kernel manager, kernel client).
    """
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            return _start_new_kernel(*args, **kwargs)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


nbval.kernel.start_new_kernel = start_new_kernel_in_turn
