"""Benchmark of the registered transformer study: runs per second of its units against a
dense matrix product's FLOP/s, float32 against float64, and the registered run's wall time.

Run from the repository root:  python benchmarks/transformer_study.py [--steps 30]
It prints a Markdown table and writes it to benchmarks/transformer_study.md, which the performance page
includes. Every number is measured here in one run, except the two read from committed records: the
agreement of float32 with float64 (the pilot's configuration stage, book/data/transformer_pilot/) and the
registered run's wall time and CPU time (book/data/transformer_study/study.json.gz; while the run is going,
its finished units in runs/transformer_study/study.units). One thread, as the
study's workers. Nothing here is a test.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from lagtheory.experiments.confirmatory.transformer import (  # noqa: E402
    STUDY_FOLDER,
    load_design,
    study_rows,
    study_units,
)
from lagtheory.experiments.engine.cells import TrainingConfig, run_rows, standard_draws  # noqa: E402
from lagtheory.experiments.exploratory.records import config_from_dict  # noqa: E402
from lagtheory.experiments.exploratory.transformer_pilot import PILOT_SEEDS, SEED_CHUNK, training_at  # noqa: E402
from lagtheory.experiments.tasks.transformer.task import TransformerLanguageRuns, TransformerSetting  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PILOT = ROOT / "book" / "data" / "transformer_pilot" / "configuration.json.gz"
STUDY = ROOT / STUDY_FOLDER / "study.json.gz"
FLAGS = ("failed", "recognised")


def matmul_flops(dtype: torch.dtype, size: int = 1024, repeats: int = 5) -> float:
    """FLOP/s of a dense ``size`` x ``size`` matrix product in ``dtype`` on one thread (median of ``repeats``)."""
    a = torch.randn(size, size, dtype=dtype)
    a @ a
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        times.append(time.perf_counter() - start)
    return 2 * size**3 / statistics.median(times)


def unit_speed(dtype: str, steps: int) -> tuple[float, float, int]:
    """Runs per second of one study unit's shape (the first compared language's rows, 4 x SEED_CHUNK seeds),
    training ``steps`` steps and evaluating, in ``dtype``, and the achieved FLOP/s of its training (matrix
    products of one forward and backward step, torch's FlopCounterMode); returns (runs per second of a full
    run of the design's budget, extrapolated from ``steps`` steps plus one evaluation; FLOP/s; runs)."""
    design = load_design()
    language = design["compared"][0]
    setting = dataclasses.replace(config_from_dict(TransformerSetting, design["setting"]), compute_dtype=dtype)
    task = TransformerLanguageRuns(language, setting)
    rows = study_rows(design, language)
    seeds = range(4 * SEED_CHUNK)
    short = [(name, dataclasses.replace(config, steps=steps, warm_steps=steps // 4)) for name, config in rows]
    run_rows(task, short[:1], [0], evaluate=False)  # warm-up
    start = time.perf_counter()
    result = run_rows(task, short, seeds, evaluate=False)
    train = (time.perf_counter() - start) / steps
    start = time.perf_counter()
    task.evaluate({name: torch.from_numpy(value) for name, value in result.final.items()})
    evaluation = time.perf_counter() - start
    runs = len(rows) * len(seeds)
    full = rows[0][1].steps * train + evaluation
    draws = standard_draws(task, seeds)
    params = {k: v.expand(len(rows), *v.shape).clone().requires_grad_(True) for k, v in draws.items()}
    batch = task.training_stream(list(seeds), 1, rows[0][1].batch_size).batch(0)
    with FlopCounterMode(display=False) as counter:
        torch.autograd.grad(task.losses(params, batch).sum(), list(params.values()))
    return runs / full, counter.get_total_flops() / train, runs


def batching_speed(steps: int, batches: tuple[int, ...] = (1, 4, 16, 64, 256)) -> list[tuple[int, float]]:
    """Seed batching in one process: runs per CPU second of the full budget (``steps`` steps timed, extrapolated,
    plus one evaluation) of joint and lag (T/4) at the first compared language's shared rate, the two rows a
    replication runs per variant, with ``b`` seeds trained together in one batched loop, for each b of
    ``batches``; float64, one thread. CPU time of this process (``time.process_time``), not wall time, so that
    other processes on a shared machine slow it less."""
    design = load_design()
    language = design["compared"][0]
    task = TransformerLanguageRuns(language, config_from_dict(TransformerSetting, design["setting"]))
    rate = design["choices"][language]["shared_rate"]
    base = config_from_dict(TrainingConfig, design["training"])
    rows = [("joint", training_at(rate, base=base)), ("lag", training_at(rate, 0.25, base=base))]
    short = [(name, dataclasses.replace(config, steps=steps, warm_steps=steps // 4)) for name, config in rows]
    run_rows(task, short[:1], [0], evaluate=False)  # warm-up
    found = []
    for size in batches:
        seeds = list(range(size))
        start = time.process_time()
        result = run_rows(task, short, seeds, evaluate=False)
        train = (time.process_time() - start) / steps
        start = time.process_time()
        task.evaluate({name: torch.from_numpy(value) for name, value in result.final.items()})
        evaluation = time.process_time() - start
        found.append((size, len(rows) * size / (rows[0][1].steps * train + evaluation)))
    return found


def agreement() -> list[tuple[str, str]]:
    """Float32 against float64 in the pilot's configuration stage: the same units (language, architecture,
    seeds) run in both arithmetics; per flag, the runs whose flag is the same."""
    with gzip.open(PILOT, "rt", encoding="utf-8") as handle:
        units = json.load(handle)["units"]
    same = dict.fromkeys((*FLAGS, "recognised_at"), 0)
    total = lengths = 0
    for name, unit in units.items():
        if not name.startswith("configuration-float64-") or name.replace("float64", "float32", 1) not in units:
            continue
        other = units[name.replace("float64", "float32", 1)]
        for wide, narrow in zip(unit["rows"], other["rows"], strict=True):
            for flag in FLAGS:
                same[flag] += int(np.sum(np.array(wide["values"][flag]) == np.array(narrow["values"][flag])))
            at = np.array(wide["values"]["recognised_at"]) == np.array(narrow["values"]["recognised_at"])
            same["recognised_at"] += int(at.sum())
            total += len(wide["values"]["failed"])
            lengths += at.size
    return [
        (
            "float32 vs float64, the pilot's configuration stage (same runs): failure flags equal",
            f"{same['failed']} of {total}",
        ),
        ("same: recognition flags (4 N0 and 16 N0) equal", f"{same['recognised']} of {total}"),
        ("same: recognition at each test length (N0, 4 N0, 16 N0) equal", f"{same['recognised_at']} of {lengths}"),
    ]


def running_rows() -> list[tuple[str, str]]:
    """While the registered run is going: its finished units (``runs/transformer_study/study.units``), their
    runs, and the wall and CPU time each took in its worker."""
    folder = ROOT / "runs" / "transformer_study" / "study.units"
    done = [json.loads(path.read_text())["result"] for path in sorted(folder.glob("*.json"))] if folder.exists() else []
    if not done:
        return [("the registered run", "no unit finished yet")]
    runs = sum(len(unit["rows"]) * len(unit["rows"][0]["values"]["failed"]) for unit in done)
    wall = [unit["seconds"] for unit in done]
    cpu = [unit["cpu_seconds"] for unit in done]
    return [
        (
            "the registered run, in progress (2 workers at nice 19 on the shared machine): finished units",
            f"{len(done)} of {len(study_units(load_design(), '-'))}; {runs} runs",
        ),
        (
            "same: per finished unit, worker wall time and CPU time (median)",
            f"{statistics.median(wall) / 60:.1f} min wall, {statistics.median(cpu) / 60:.1f} min CPU",
        ),
    ]


def study_rows_measured() -> list[tuple[str, str]]:
    """The registered run's record: its runs, wall time and the CPU time its units took."""
    if not STUDY.exists():
        return running_rows()
    with gzip.open(STUDY, "rt", encoding="utf-8") as handle:
        record = json.load(handle)
    runs = sum(len(unit["rows"]) * len(unit["seeds"]) for unit in record["units"].values())
    cpu = sum(unit["cpu_seconds"] for unit in record["units"].values())
    wall = record["wall_seconds"]
    unit_wall = [unit["seconds"] for unit in record["units"].values()]
    return [
        (
            "the registered run (python -m lagtheory.experiments.confirmatory.transformer run, 2 workers at nice 19): "
            "runs; worker CPU time summed over its units",
            f"{runs} runs; {cpu / 3600:.2f} h CPU ({runs / cpu:.2f} runs per CPU second)",
        ),
        (
            "same: wall time of the run command's last invocation (it resumes from finished units, so a restarted "
            "run's earlier units are not in it); median worker wall time per unit",
            f"{wall / 3600:.2f} h; {statistics.median(unit_wall) / 60:.1f} min",
        ),
    ]


def main() -> None:
    """Measure and write the table (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30, help="training steps timed per arithmetic")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for dtype, torch_dtype in (("float64", torch.float64), ("float32", torch.float32)):
        per_second, achieved, runs = unit_speed(dtype, args.steps)
        peak = matmul_flops(torch_dtype)
        rows.append(
            (
                f"{dtype}: a study unit ({runs} runs batched, {args.steps} steps timed, one evaluation): runs per second "
                "of the full budget",
                f"{per_second:.3g} runs/s",
            )
        )
        rows.append(
            (
                f"{dtype}: achieved FLOP/s of its training (matrix products) vs a {dtype} 1024 x 1024 matmul",
                f"{achieved / 1e9:.3g} vs {peak / 1e9:.3g} GFLOP/s ({achieved / peak:.1%})",
            )
        )
    batched = batching_speed(args.steps)
    rows += [
        (
            f"float64: seed batching, joint and lag at a shared rate with b seeds in one batched loop: runs per CPU second "
            f"(b = {', '.join(str(b) for b, _ in batched)})",
            ", ".join(f"{speed:.3g}" for _, speed in batched)
            + f" runs/s (speed-up {batched[-1][1] / batched[0][1]:.3g}x from b = {batched[0][0]} to {batched[-1][0]})",
        )
    ]
    rows += agreement() + study_rows_measured()
    load = os.getloadavg()[0]
    lines = [
        f"Measured on this book's {os.cpu_count()}-core {platform.machine()} machine (Python "
        f"{platform.python_version()}, torch {torch.__version__}, one thread), {time.strftime('%Y-%m-%d')}, by "
        f"`python benchmarks/transformer_study.py --steps {args.steps}` (load average {load:.1f} at the end, from "
        f"other processes sharing the machine); pilot seeds {PILOT_SEEDS[0]}..{PILOT_SEEDS[-1]}.",
        "",
        "| what | measured |",
        "| --- | --- |",
        *(f"| {what} | {value} |" for what, value in rows),
    ]
    text = "\n".join(lines)
    print(text)
    (ROOT / "benchmarks" / "transformer_study.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
