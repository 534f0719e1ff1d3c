"""Test-session setup shared by the unit tests and the notebooks (nbval).

The suite runs on two pytest-xdist workers (pytest.ini), each starting its own notebook
kernels. Numerical libraries default to one thread per core; two workers with two-thread
BLAS and OpenMP pools on a two-core machine oversubscribe it, and a spinning BLAS pool can
make one numpy dot product hundreds of times slower. So every process of the test session
(workers and kernels inherit the environment) uses one thread unless the caller says
otherwise. This changes no result beyond the last bits of a float sum, which no stored
output prints.

The workers' kernels also start one at a time. Two kernels started at the same moment can be
given the same free TCP port by jupyter_client, and one of them then dies ("Kernel died before
replying to kernel_info"; jupyter/jupyter_client#487): a fresh-clone CI run of this book met it
once. nbval's kernel start is wrapped in an exclusive lock on a file in the temporary directory,
held until the kernel answers (it has bound its ports by then); the notebooks still run in
parallel. So is the kernel start of every nbclient ``NotebookClient`` the tests create (the
chapter recipe's, the explore page's): the lock covers the kernel's start and its client's
wait for the kernel's answer, and the cells then run outside it, beside the other worker's
kernel starts.

The study-layer tests share one local dask cluster (:func:`dask_scheduler`): starting a cluster
costs seconds of worker start-up (each worker imports torch and the package), more than the
tiny studies they run. The tests of a cluster's own start (``workers=2`` without a scheduler)
still start their own. Every worker process the tests start (:func:`forked_dask_workers`) is
forked from a fork server that has imported torch and the package once (dask's "forkserver"
method, :data:`DASK_WORKER_PRELOAD`), not spawned as a fresh interpreter that imports them
again: ~3 core-s per worker, and the cluster tests start a dozen. A fork server's process is a
fresh interpreter that only imports those modules, so a worker still sees none of the test
process's state (a monkeypatched registry, say), as a spawned one would.
"""

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbval.kernel
import pytest
from nbclient import NotebookClient

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

KERNEL_START_LOCK = Path(tempfile.gettempdir()) / "lagtheory-nbval-kernel-start.lock"
"""The file whose lock the kernel start-ups take in turn (every worker of every run on this machine)."""

_start_new_kernel = nbval.kernel.start_new_kernel


@contextmanager
def kernel_start_turn() -> Iterator[None]:
    """Hold :data:`KERNEL_START_LOCK` (exclusively) for the duration of the block."""
    with KERNEL_START_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start_new_kernel_in_turn(*args: Any, **kwargs: Any) -> Any:
    """Run nbval's ``start_new_kernel`` while holding :data:`KERNEL_START_LOCK`; arguments and result pass through."""
    with kernel_start_turn():
        return _start_new_kernel(*args, **kwargs)


nbval.kernel.start_new_kernel = start_new_kernel_in_turn

_start_notebook_client_kernel = NotebookClient.async_start_new_kernel


async def start_notebook_client_kernel_in_turn(client: NotebookClient, **kwargs: Any) -> None:
    """Start ``client``'s kernel and its kernel client, until the kernel answers, while holding
    :data:`KERNEL_START_LOCK`; arguments pass through. nbclient's kernel setup calls this and, finding
    the client started, goes on to the cells outside the lock."""
    with kernel_start_turn():
        await _start_notebook_client_kernel(client, **kwargs)
        await client.async_start_new_kernel_client()


NotebookClient.async_start_new_kernel = start_notebook_client_kernel_in_turn


DASK_WORKER_PRELOAD = ("distributed", "torch", "lagtheory.experiments.engine.distributed")
"""What the dask workers' fork server imports before it forks the first worker (a unit's work needs torch,
and :func:`lagtheory.experiments.engine.distributed.run_units` sends its tasks through that module)."""


@contextmanager
def forkserver_for_dask_workers() -> Iterator[None]:
    """Within the block, the dask worker processes started in this process (a ``LocalCluster``'s, a nanny's
    restart) are forked from one fork server that has imported :data:`DASK_WORKER_PRELOAD`."""
    import dask
    from distributed.utils import get_mp_context

    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        # dask names its own preload on its first call; the server starts with the first worker, after this
        get_mp_context().set_forkserver_preload(list(DASK_WORKER_PRELOAD))
        yield


@pytest.fixture
def forked_dask_workers() -> Iterator[None]:
    """:func:`forkserver_for_dask_workers` for the duration of a test."""
    with forkserver_for_dask_workers():
        yield


@pytest.fixture(scope="session")
def dask_scheduler() -> Iterator[str]:
    """The address of a local dask cluster of two single-threaded worker processes, started once per test
    session (per pytest-xdist worker) and shared by the tests that run units on a cluster without testing
    how a cluster is started."""
    from dask.distributed import LocalCluster

    with (
        forkserver_for_dask_workers(),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
    ):
        yield cluster.scheduler_address
