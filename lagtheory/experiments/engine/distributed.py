"""Run a study's units of work on a dask.distributed cluster: resumable, fault-tolerant, and
identical to a serial run.

A *unit* is one independent piece of a study (a cell, or the cells that one batched engine call
runs together), named by a string; ``work(payload)`` computes its part of the record as a
JSON-ready mapping and depends on nothing but the payload (its seeds are in it). Then

* :func:`run_units` submits every unit that is not finished yet as a dask task, on a
  ``LocalCluster`` of this machine when no scheduler address is given, or on the cluster at
  ``scheduler`` (``tcp://HOST:PORT``);
* each finished unit is written by the client, as it completes, to ``<folder>/<name>.json``
  atomically (a temporary file renamed over the target), so a run stopped at any moment leaves
  only whole units behind; workers need no shared file system;
* a restarted run reads the finished units and submits only the others (:func:`finished`);
  a unit file written for another payload (a changed design) is refused, never mixed in;
* a worker that dies mid-run loses no finished unit: the scheduler runs its unfinished tasks
  again on the other workers (and on the worker the nanny restarts);
* a run that ends says how many units it ran and found; a run that stops early (an error, or
  Ctrl-C) says how many units are written and that the same command resumes from them;
* a local cluster's worker processes are given :data:`WORKER_EXIT_SECONDS` to exit when it closes
  (:func:`close_workers`), so a clean finish kills no worker and logs no warning;
* every task runs with one torch thread, as the serial run does, so a unit's floats do not
  depend on where it ran: :func:`run_units_serially` is the reference the tests compare with,
  bit for bit.

Each unit file holds ``{"name", "fingerprint", "result"}``, the fingerprint being the SHA-256
of the payload's JSON form (:func:`fingerprint`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Work = Callable[[Any], Mapping[str, Any]]
"""The computation of one unit; payload -> its JSON-ready result."""

WORKER_EXIT_SECONDS = 60.0
"""How long a worker process may take to exit when its local cluster closes. A process that has imported torch
took 2 s to exit on a loaded 2-core machine and a dask worker more than dask's own 4 s, after which its nanny
kills it and logs "Worker process still alive after 4.0 seconds, killing" (measured: on every clean finish of
the lab's command there)."""


def fingerprint(payload: Any) -> str:
    """SHA-256 of the payload's canonical JSON form (sorted keys).

    Parameters
    ----------
    payload : object
        JSON-ready data (no NaN or infinity).

    Returns
    -------
    str
        64 lowercase hex digits.

    Raises
    ------
    ValueError
        If the payload holds NaN or infinity.
    TypeError
        If it is not JSON-ready.
    """
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _unit_path(folder: Path, name: str) -> Path:
    if not name or any(ch in name for ch in "/\\\0") or name.startswith("."):
        raise ValueError(f"units: a unit name must be a non-empty file name without '/', got {name!r}")
    return folder / f"{name}.json"


def write_atomically(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` so that a reader sees the old file or the new one, whole.

    Parameters
    ----------
    path : pathlib.Path
        The file (its folder is created if needed).
    data : mapping
        JSON-ready data (no NaN or infinity).

    Raises
    ------
    ValueError
        If the data hold NaN or infinity (nothing is written).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(data, stream, sort_keys=True, separators=(",", ":"), allow_nan=False)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def finished(units: Mapping[str, Any], folder: Path) -> dict[str, dict[str, Any]]:
    """The results of the units already written to ``folder`` (name -> result).

    Parameters
    ----------
    units : mapping of str to object
        Unit name -> payload.
    folder : pathlib.Path
        Where the unit files are.

    Returns
    -------
    dict of str to dict
        Name -> result of every unit with a file.

    Raises
    ------
    ValueError
        If a unit's file was written for another payload (its fingerprint differs): the folder
        belongs to another design and must not be resumed into; or a unit name is not a file name.
    """
    done = {}
    for name, payload in units.items():
        path = _unit_path(folder, name)
        if not path.exists():
            continue
        stored = json.loads(path.read_text())
        if stored.get("fingerprint") != fingerprint(payload):
            raise ValueError(
                f"folder: {path} was written for another payload of unit {name!r}; "
                "use a new folder for a changed design"
            )
        done[name] = stored["result"]
    return done


def _one_thread_work(work: Work, payload: Any) -> dict[str, Any]:
    """``work(payload)`` with one torch thread (the setting of every serial run), as plain JSON data."""
    import torch

    torch.set_num_threads(1)
    return json.loads(json.dumps(work(payload), allow_nan=False))


def run_units_serially(units: Mapping[str, Any], work: Work) -> dict[str, dict[str, Any]]:
    """Every unit in this process, one after the other: the reference of :func:`run_units`.

    Parameters
    ----------
    units : mapping of str to object
        Unit name -> payload.
    work : callable
        Payload -> JSON-ready result (:data:`Work`).

    Returns
    -------
    dict of str to dict
        Unit name -> result, in the order of ``units``.
    """
    return {name: _one_thread_work(work, payload) for name, payload in units.items()}


def close_workers(cluster: Any) -> None:
    """Close the worker processes of a local dask cluster, all at once, each allowed
    :data:`WORKER_EXIT_SECONDS` to exit, before the cluster itself is closed.

    Parameters
    ----------
    cluster : dask.distributed.LocalCluster
        A running local cluster; its nannies are closed (closing it afterwards finds them closed).
    """

    async def close_all(nannies: list[Any]) -> None:
        await asyncio.gather(*(nanny.close(timeout=WORKER_EXIT_SECONDS) for nanny in nannies))

    cluster.sync(close_all, list(cluster.workers.values()))


def run_units(
    units: Mapping[str, Any],
    work: Work,
    folder: str | Path,
    *,
    scheduler: str | None = None,
    workers: int = 2,
    progress: bool = True,
    on_result: Callable[[str], None] | None = None,
    weights: Mapping[str, int] | None = None,
    unit: str = "unit",
) -> dict[str, dict[str, Any]]:
    """Run every unfinished unit as a dask task and write each result to ``folder`` as it completes.

    Parameters
    ----------
    units
        Unit name -> payload (JSON-ready; it is fingerprinted and sent to a worker).
    work
        Payload -> JSON-ready result; a module-level function, so that workers can import it.
    folder
        Where ``<name>.json`` of each finished unit is written; finished units found there are
        not run again.
    scheduler
        Address of a running dask scheduler; ``None`` starts a ``LocalCluster`` of ``workers``
        single-threaded worker processes on this machine.
    workers
        Worker processes of the local cluster (1 or more; ignored with ``scheduler``).
    progress
        Show a progress bar over units (tqdm, on standard error).
    weights
        Unit name -> how many things (cells) it holds, which the progress bar counts (default 1 each).
    unit
        What the progress bar counts ("unit", "cell", ...).
    on_result
        Called with each unit's name once its result is written (after the write).

    Returns
    -------
    dict
        Unit name -> result, for every unit, in the order of ``units``.

    """
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if scheduler is not None and not (isinstance(scheduler, str) and "://" in scheduler):
        raise ValueError(f"scheduler must be an address such as 'tcp://HOST:8786', got {scheduler!r}")
    folder = Path(folder)
    for name in units:
        _unit_path(folder, name)  # every name is checked before anything runs
    results = finished(units, folder)
    todo = [name for name in units if name not in results]
    weight = {name: 1 if weights is None else weights[name] for name in units}
    if todo:
        if scheduler is None:
            # ":0", a free port: the scheduler serves HTTP even without a dashboard, and its default port 8787
            # is taken when another cluster runs on this machine (a warning, an error under the tests)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
            client = Client(cluster)
        else:
            cluster = None
            client = Client(scheduler)
        try:
            futures = {
                client.submit(
                    _one_thread_work, work, units[name], key=f"unit-{name}-{fingerprint(units[name])[:12]}", pure=False
                ): name
                for name in todo
            }
            total = sum(weight.values())
            done = total - sum(weight[name] for name in todo)
            with tqdm(total=total, initial=done, unit=unit, disable=not progress) as bar:
                for future in as_completed(futures):
                    name = futures[future]
                    result = future.result()
                    write_atomically(
                        _unit_path(folder, name),
                        {"name": name, "fingerprint": fingerprint(units[name]), "result": result},
                    )
                    results[name] = result
                    bar.update(weight[name])
                    if on_result is not None:
                        on_result(name)
        except BaseException:
            if progress:
                print(
                    f"stopped with {len(results)} of {len(units)} units written in {folder}; "
                    "the same command run again resumes from them",
                    file=sys.stderr,
                )
            raise
        finally:
            client.close()
            if cluster is not None:
                close_workers(cluster)
                cluster.close()
    if progress:
        print(
            f"{len(units)} units in {folder}: {len(todo)} run now, {len(units) - len(todo)} found there",
            file=sys.stderr,
        )
    return {name: results[name] for name in units}
