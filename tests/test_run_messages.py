"""What the experiment command says on standard error means something (lagtheory.experiments.engine.distributed).

A run that finishes says how many units it ran and found, and nothing about resuming; a local cluster's
workers, which have imported torch, are let exit when it closes, so no nanny kills one and logs "Worker
process still alive ..., killing" (it did on every clean finish of the lab's command on a loaded 2-core
machine). The test makes each worker process slow to exit (6 s, more than the 4 s dask's nanny waits by
default), so it fails on any machine when the workers are not given longer. A run that stops early says how
many units are written and that the same command resumes.
"""

from __future__ import annotations

import logging
import multiprocessing.util
import time

import pytest
import torch

from lagtheory.experiments.engine.distributed import run_units

pytestmark = pytest.mark.usefixtures("forked_dask_workers")  # workers forked from a fork server (conftest)

UNITS = {f"cell-{index}": {"seed": index} for index in range(6)}


def torch_work(payload):
    """A unit that imports and uses torch, as the study's units do."""
    generator = torch.Generator().manual_seed(payload["seed"])
    x = torch.randn(200, 200, dtype=torch.float64, generator=generator)
    return {"seed": payload["seed"], "value": float((x @ x.T).trace())}


SLOW_EXIT_SECONDS = 6.0
"""How long a worker process of :func:`slow_to_exit_work` takes to exit: longer than dask's nanny waits by default
(0.8 x its 5 s close timeout), as a worker that has imported torch did on a loaded machine."""
_slow_exit = []  # in a worker process: whether its exit was made slow


def slow_to_exit_work(payload):
    """:func:`torch_work`, in a worker process that then takes :data:`SLOW_EXIT_SECONDS` to exit (a finaliser
    that multiprocessing runs as the process ends, registered once per process)."""
    if not _slow_exit:
        multiprocessing.util.Finalize(None, time.sleep, args=(SLOW_EXIT_SECONDS,), exitpriority=0)
        _slow_exit.append(True)
    return torch_work(payload)


def test_a_clean_finish_on_a_local_cluster_kills_no_worker_and_says_nothing_of_resuming(tmp_path, capfd, caplog):
    with caplog.at_level(logging.WARNING):
        run_units(UNITS, slow_to_exit_work, tmp_path, workers=2, progress=True)
    said = capfd.readouterr().err
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert not [message for message in warnings if "killing" in message or "still alive" in message], warnings
    assert "killing" not in said and "resume" not in said, said
    assert f"6 units in {tmp_path}: 6 run now, 0 found there" in said


def test_a_stopped_run_says_how_to_resume_and_the_resumed_run_does_not(tmp_path, capfd, dask_scheduler):
    written = []

    def stop_after_two(name):
        written.append(name)
        if len(written) == 2:
            raise KeyboardInterrupt  # the run is stopped here, as by Ctrl-C

    try:
        run_units(UNITS, torch_work, tmp_path, scheduler=dask_scheduler, on_result=stop_after_two)
    except KeyboardInterrupt:
        pass
    said = capfd.readouterr().err
    assert f"stopped with 2 of 6 units written in {tmp_path}; the same command run again resumes from them" in said
    run_units(UNITS, torch_work, tmp_path, scheduler=dask_scheduler)
    said = capfd.readouterr().err
    assert f"6 units in {tmp_path}: 4 run now, 2 found there" in said and "resume" not in said
