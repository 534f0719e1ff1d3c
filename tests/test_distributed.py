"""Studies on a dask cluster (lagtheory.experiments.engine.distributed): the same records as a serial
run, bit for bit; resumable; a killed worker loses nothing."""

import json
import os
import signal
import time

import pytest
import torch

from lagtheory.experiments.engine.distributed import (
    fingerprint,
    finished,
    run_units,
    run_units_serially,
    write_atomically,
)

pytestmark = pytest.mark.usefixtures("forked_dask_workers")  # workers forked from a fork server (conftest)

UNITS = {f"cell-{index}": {"seed": index, "size": 2000 + 7 * index} for index in range(6)}


def float_work(payload):
    """Floats whose last bits depend on the order of a long reduction (and on torch's threads)."""
    generator = torch.Generator().manual_seed(payload["seed"])
    x = torch.randn(payload["size"], dtype=torch.float64, generator=generator)
    return {
        "seed": payload["seed"],
        "value": float(torch.dot(torch.exp(x), torch.sin(x)).item()),
        "sum": float(x.sum()),
    }


def slow_work(payload):
    time.sleep(0.4)
    return float_work(payload)


def as_json(results):
    return json.dumps(results, sort_keys=True)


@pytest.fixture(scope="module")
def serial():
    return run_units_serially(UNITS, float_work)


def test_a_local_cluster_writes_the_serial_records_bit_for_bit(tmp_path, serial):
    results = run_units(UNITS, float_work, tmp_path, workers=2, progress=False)
    assert as_json(results) == as_json(serial)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{name}.json" for name in UNITS)
    stored = json.loads((tmp_path / "cell-3.json").read_text())
    assert stored["fingerprint"] == fingerprint(UNITS["cell-3"]) and stored["result"] == serial["cell-3"]


def test_a_stopped_run_resumes_with_the_unfinished_units_only(tmp_path, serial, dask_scheduler):
    written = []

    def stop_after_two(name):
        written.append(name)
        if len(written) == 2:
            raise KeyboardInterrupt  # the run is stopped here

    with pytest.raises(KeyboardInterrupt):
        run_units(UNITS, float_work, tmp_path, scheduler=dask_scheduler, progress=False, on_result=stop_after_two)
    assert set(finished(UNITS, tmp_path)) == set(written)  # whole units only, no temporary file left
    assert not [path for path in tmp_path.iterdir() if path.suffix != ".json"]
    rerun = []
    results = run_units(UNITS, float_work, tmp_path, scheduler=dask_scheduler, progress=False, on_result=rerun.append)
    assert sorted(rerun) == sorted(set(UNITS) - set(written))
    assert as_json(results) == as_json(serial)


def test_a_killed_worker_loses_no_finished_unit(tmp_path, serial):
    from dask.distributed import LocalCluster

    units = {f"slow-{index}": payload for index, payload in enumerate(UNITS.values())}
    expected = {f"slow-{index}": result for index, result in enumerate(serial.values())}
    killed = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:

        def kill_one_worker(name):
            if not killed:
                nanny = next(iter(cluster.workers.values()))
                killed.append(nanny.process.process.pid)
                os.kill(killed[0], signal.SIGKILL)

        results = run_units(
            units, slow_work, tmp_path, scheduler=cluster.scheduler_address, progress=False, on_result=kill_one_worker
        )
    assert killed, "no worker was killed"
    assert as_json(results) == as_json(expected)
    assert set(finished(units, tmp_path)) == set(units)


def test_a_folder_of_another_design_is_refused(tmp_path):
    other = {name: {**payload, "size": payload["size"] + 1} for name, payload in UNITS.items()}
    write_atomically(
        tmp_path / "cell-0.json", {"name": "cell-0", "fingerprint": fingerprint(other["cell-0"]), "result": {}}
    )
    with pytest.raises(ValueError, match=r"folder: .*another payload of unit 'cell-0'"):
        run_units(UNITS, float_work, tmp_path, progress=False)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"workers": 0}, "workers must be an integer >= 1"), ({"scheduler": "localhost"}, "scheduler must be an address")],
)
def test_bad_arguments_are_named(tmp_path, arguments, message):
    with pytest.raises(ValueError, match=message):
        run_units(UNITS, float_work, tmp_path, progress=False, **arguments)


def test_a_unit_name_must_be_a_file_name(tmp_path):
    with pytest.raises(ValueError, match="unit name"):
        run_units({"a/b": {}}, float_work, tmp_path, progress=False)
