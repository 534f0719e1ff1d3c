"""Benchmarks of the lagtheory book: ratios measured in one run (the performance page).

Run from the repository root:  python benchmarks/bench.py [--skip-tests] [--skip-book]
It prints Markdown tables and writes them to benchmarks/results.md, which the book's
performance page includes. Every ratio compares two timings taken in the same run, on the
machine that runs the script; timings are medians of repeated calls. Numerical libraries
run on one thread (set below, before numpy is imported) so that a ratio does not depend on
how many cores other processes leave free. Nothing here is a test.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy.special import expit  # noqa: E402

from lagtheory import BinomialCount, Data, Geometric, OneB, PowerLaw, UniformCount, population, recognition  # noqa: E402
from lagtheory.count_forward import pooled_from_counts  # noqa: E402
from lagtheory.exact_recognition import _recognition_trusted  # noqa: E402
from lagtheory.memory import MEMORY_BUDGET, size_text  # noqa: E402
from lagtheory.model import ShallowTransformer  # noqa: E402
from lagtheory.pooling import _log_odds_parts  # noqa: E402
from lagtheory.population import STRING_BYTES, _cached_table, _population_trusted, truncation_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
THETA, U = np.array([0.0, 1.2]), np.array([-1.0, 2.0])
TOL = 1e-12

Row = tuple[str, str, str]  # (what, measured, ratio)


def median_time(function, repeats: int, number: int = 1) -> float:
    """Median wall time of one call, in seconds (``number`` calls per timing)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            function()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def milliseconds(seconds: float) -> str:
    """A time in milliseconds, three significant digits."""
    return f"{seconds * 1e3:.3g} ms"


def overhead_rows() -> list[Row]:
    """Package calls against a bare numpy (or torch) evaluation of the same sums."""
    lengths = Geometric(10.0)
    result = population(THETA, U, Data(lengths, tol=TOL))
    N = result.truncation_length
    n = np.arange(1, N + 1, dtype=np.float64)
    weight = lengths.pmf(n)
    base, scale = _log_odds_parts(n, np.ones_like(n), "log")

    def bare_sums():
        z = base + (THETA[1] - THETA[0]) * scale
        p, q = expit(z), expit(-z)
        f = U[0] * q + U[1] * p
        miss = expit(-f)
        return weight @ np.logaddexp(0.0, -f), weight @ (miss * q), weight @ (miss * p), weight @ (miss * scale * p * q)

    bare = median_time(bare_sums, 15, 200)
    data = Data(lengths, tol=TOL)  # checked once, as a training run does
    public = median_time(lambda: population(THETA, U, data), 15, 200)
    trusted = median_time(lambda: _population_trusted(THETA, U, data, "log"), 15, 200)
    step_public = median_time(lambda: (population(THETA, U, data), recognition(THETA, U)), 15, 100)
    step_trusted = median_time(
        lambda: (
            _population_trusted(THETA, U, data, "log"),
            _recognition_trusted(THETA, U, 10**12, "log"),
        ),
        15,
        100,
    )
    rows = [
        (f"exact loss + gradient, Geometric(10), tol 1e-12 (N = {N}): bare numpy sums", milliseconds(bare), "1"),
        ("same, `population` (checks its arguments)", milliseconds(public), f"{public / bare:.1f}x bare"),
        (
            "same, `_population_trusted` (the training loops' path)",
            milliseconds(trusted),
            f"{trusted / bare:.1f}x bare",
        ),
        ("one GD step's exact work (population + recognition), public calls", milliseconds(step_public), ""),
        (
            "one GD step's exact work, trusted path (`run_schedule`)",
            milliseconds(step_trusted),
            f"{step_trusted / bare:.1f}x bare sums",
        ),
    ]
    model = ShallowTransformer(vocab_size=2)
    with torch.no_grad():
        model.theta.copy_(torch.tensor(THETA))
        model.u.copy_(torch.tensor(U))
    counts = torch.tensor([[999.0, 1.0]], dtype=torch.float64)
    counts_np = counts.numpy()

    def bare_forward():
        logits = np.log(counts_np) + THETA * np.log(counts_np.sum(axis=1, keepdims=True))
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        h = weights / weights.sum(axis=1, keepdims=True)
        return U[0] + h[:, 1:] @ (U[1:] - U[0])

    forward_bare = median_time(bare_forward, 15, 500)
    with torch.no_grad():
        forward = median_time(lambda: model.forward_counts(counts), 15, 500)
        forward_trusted = median_time(lambda: _forward_counts_unchecked(model, counts), 15, 500)
    rows += [
        ("count-based forward of one string: bare numpy", milliseconds(forward_bare), "1"),
        (
            "same, `forward_counts` (torch, checks its counts)",
            milliseconds(forward),
            f"{forward / forward_bare:.1f}x bare",
        ),
        (
            "same, without the argument checks",
            milliseconds(forward_trusted),
            f"{forward_trusted / forward_bare:.1f}x bare",
        ),
    ]
    return rows


def _forward_counts_unchecked(model: ShallowTransformer, counts: torch.Tensor) -> torch.Tensor:
    """``model.forward_counts(counts)`` without its argument checks (no positional marker)."""
    return model._readout(pooled_from_counts(model.theta, None, counts, None, model.scaling))


def monte_carlo_rows(samples: int = 20_000) -> list[Row]:
    """Monte-Carlo gradient (torch autograd on sampled strings) against the exact sum at the same accuracy."""
    exact = median_time(lambda: population(THETA, U, Data(Geometric(10.0), tol=TOL)), 15, 50)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ShallowTransformer(vocab_size=2)
    with torch.no_grad():
        model.theta.copy_(torch.tensor(THETA))
        model.u.copy_(torch.tensor(U))
    n = rng.geometric(1 / 10.0, size=samples).astype(float)
    positive = rng.random(samples) < 0.5
    counts = torch.tensor(np.stack([n - positive, positive.astype(float)], axis=1))
    y = torch.tensor(np.where(positive, 1.0, -1.0))

    def estimate():
        model.zero_grad()
        torch.nn.functional.softplus(-y * model.forward_counts(counts)).mean().backward()

    seconds = median_time(estimate, 5)
    per_sample = []  # per-string d/dt gradients: their spread sets the standard error
    for i in range(2000):
        model.zero_grad()
        torch.nn.functional.softplus(-y[i] * model.forward_counts(counts[i : i + 1])).sum().backward()
        per_sample.append(float(model.theta.grad[1]))
    sd = float(np.std(per_sample))
    rows = [
        ("exact gradient, Geometric(10), error <= 1e-12 (proven)", milliseconds(exact), "1"),
        (
            f"Monte-Carlo gradient, {samples} sampled strings (standard error {sd / math.sqrt(samples):.1e})",
            milliseconds(seconds),
            f"{seconds / exact:.0f}x exact",
        ),
    ]
    for accuracy in (1e-4, 1e-12):
        needed = (sd / accuracy) ** 2
        extrapolated = needed * seconds / samples
        rows.append(
            (
                f"Monte Carlo at standard error {accuracy:g} ({needed:.1e} samples, extrapolated)",
                f"{extrapolated:.1e} s",
                f"{extrapolated / exact:.0e}x exact",
            )
        )
    return rows


def heavy_tail_rows() -> list[Row]:
    """Population sums over power-law lengths at tol 1e-12: term by term (before) and with the tail expansion."""
    rows = []
    for lengths, counts in [
        (PowerLaw(4.0), OneB()),
        (PowerLaw(3.0), OneB()),
        (PowerLaw(4.0), UniformCount()),
        (PowerLaw(4.0), BinomialCount(0.3)),
        (PowerLaw(3.0), UniformCount()),
        (PowerLaw(3.0), BinomialCount(0.3)),
        (PowerLaw(2.5), UniformCount()),
    ]:
        try:
            N = truncation_for(Data(lengths, tol=TOL), U)
        except ValueError:  # N beyond 1e7: the extrapolation below is then a lower bound
            N = 10**7
        strings = _strings(counts, N)
        if strings * STRING_BYTES <= MEMORY_BUDGET:
            before = median_time(lambda law=lengths, c=counts: _uncached(law, c, TOL), 3)
            before_text = f"{milliseconds(before)} ({strings:.1e} strings)"
        else:  # refused (beyond the memory budget): the cost per string of PowerLaw(4) at tol 1e-8, times the strings
            small = population(THETA, U, Data(PowerLaw(4.0), counts, tol=1e-8), tail="bounded").truncation_length
            per_string = median_time(lambda c=counts: _uncached(PowerLaw(4.0), c, 1e-8), 3)
            before = strings * per_string / _strings(counts, small)
            more = "more than " if N == 10**7 else ""
            before_text = f"refused ({more}{strings:.1e} strings): {more}about {before:.0e} s extrapolated"
        after_result = population(THETA, U, Data(lengths, counts, tol=TOL), tail="expanded")
        after = median_time(
            lambda law=lengths, c=counts: population(THETA, U, Data(law, c, tol=TOL), tail="expanded"), 7
        )
        rows.append((f"{lengths!r}, {counts!r}: term by term, N = {N}", before_text, "1"))
        rows.append(
            (
                f"same, tail expansion (N0 = {after_result.truncation_length})",
                milliseconds(after),
                f"{before / after:,.0f}x faster",
            )
        )
    return rows


def _uncached(lengths, counts, tol: float):
    """The term-by-term sum as it was before the tail expansion: the per-string table built anew."""
    _cached_table.cache_clear()
    return population(THETA, U, Data(lengths, counts, tol=tol), tail="bounded")


def _strings(counts, N: int) -> int:
    """Strings (n, k), n <= N, that the term-by-term sum visits."""
    return N if isinstance(counts, OneB) else N * (N + 1) // 2


def evaluation_rows() -> list[Row]:
    """Token-level against count-based forwards, and the exact recognition verdict."""
    model = ShallowTransformer(vocab_size=2)
    with torch.no_grad():
        model.theta.copy_(torch.tensor(THETA))
        model.u.copy_(torch.tensor(U))
    rows = []
    for n in (10**3, 10**6):
        tokens = torch.zeros(1, n, dtype=torch.long)
        tokens[0, -1] = 1
        mask = torch.ones(1, n, dtype=torch.bool)
        counts = torch.tensor([[n - 1.0, 1.0]], dtype=torch.float64)
        with torch.no_grad():
            token_s = median_time(lambda tokens=tokens, mask=mask: model(tokens, mask), 5)
            count_s = median_time(lambda counts=counts: model.forward_counts(counts), 15, 50)
        rows.append((f"one string a^(n-1) b, n = {n:.0e}: token-level forward", milliseconds(token_s), "1"))
        rows.append(("same, count-based forward", milliseconds(count_s), f"{token_s / count_s:,.0f}x faster"))
    verdict = median_time(lambda: recognition(THETA, U, 10**18), 15, 20)
    rows.append(("exact recognition verdict over every string up to length 1e18", milliseconds(verdict), ""))
    return rows


ENGINE_TASKS = (("languages", "CONTAINS_AB"), ("regression", "regression"), ("icl", "linear"), ("icl", "softmax"))
"""(study, task) pairs of the engine benchmark."""


def engine_cells() -> list[tuple[str, Any, Any]]:
    """(study name, cell, engine task) of the engine benchmark: the SGD centre cell of each of
    :data:`ENGINE_TASKS` as stored in book/data (with its calibrated base rate)."""
    from lagtheory.experiments.exploratory.design import centre_name
    from lagtheory.experiments.exploratory.records import cell_from_configuration, load_record
    from lagtheory.experiments.exploratory.studies import STUDIES

    cells = []
    for name, task_name in ENGINE_TASKS:
        study = STUDIES[name]
        record = load_record(ROOT / "book" / "data" / f"summary_{name}.json")
        cell = cell_from_configuration(study, record["cells"][centre_name(task_name, "sgd")]["configuration"])
        cells.append((name, cell, study.build(cell.task, cell.setting)))
    return cells


def engine_rows(seeds: int = 30, looped_seeds: int = 3) -> list[tuple[str, str]]:
    """Seeds per second of the experiment engine on :func:`engine_cells`: S = 30 seeds in one
    batched run against the same seeds run one at a time (all schedules batched in both), and against one
    schedule and one seed at a time (the loop of the old protocol). The looped rates are measured on
    ``looped_seeds`` seeds."""
    from lagtheory.experiments.engine.cells import run_cell
    from lagtheory.schedules import AVAILABLE_SCHEDULES

    rows = []
    for name, cell, task in engine_cells():
        run_cell(task, cell.training, ["joint"], [0])  # warm-up: imports, test sets
        start = time.perf_counter()
        run_cell(task, cell.training, AVAILABLE_SCHEDULES, range(seeds))
        batched = seeds / (time.perf_counter() - start)
        start = time.perf_counter()
        for seed in range(looped_seeds):
            run_cell(task, cell.training, AVAILABLE_SCHEDULES, [seed])
        looped = looped_seeds / (time.perf_counter() - start)
        start = time.perf_counter()
        for seed in range(looped_seeds):
            for schedule in AVAILABLE_SCHEDULES:
                run_cell(task, cell.training, [schedule], [seed])
        single = looped_seeds / (time.perf_counter() - start)
        rows.append(
            (
                f"engine, {name} ({cell.name}), {len(AVAILABLE_SCHEDULES)} schedules: seeds/s at S = {seeds} batched "
                "vs seeds one at a time vs schedule and seed one at a time",
                f"{batched:.2f} vs {looped:.2f} vs {single:.2f} seeds/s ({batched / looped:.1f}x, {batched / single:.1f}x)",
            )
        )
    return rows


TRANSFORMER_SCHEDULES = ("joint", "lag", "three-phase", "lead", "two-timescale-0.1")


def transformer_rows(
    seeds: int = 16, looped_seeds: int = 4, steps: int = 30, device: str = "cpu"
) -> list[tuple[str, str]]:
    """The standard small transformer on FIRST, default shape and setting, ``steps`` training
    steps of the exploratory regime (evaluation not timed): seeds per second with ``seeds`` seeds in one
    batched run against seeds one at a time (measured on ``looped_seeds``), for one schedule and for
    :data:`TRANSFORMER_SCHEDULES` batched as rows; and the achieved FLOP/s of the batched run (matrix-product
    FLOPs of one forward and backward step, counted by torch's FlopCounterMode, padding included) as a
    fraction of a float64 1024 x 1024 matrix product measured here, both on one thread. With ``device`` a GPU
    ("cuda") the training runs there (the evaluation is not timed) and the matrix product is a float64
    8192 x 8192 product on that GPU, synchronised before each clock read."""
    import dataclasses

    from torch.utils.flop_counter import FlopCounterMode

    from lagtheory.experiments.engine.cells import run_rows, standard_draws
    from lagtheory.experiments.tasks.transformer.task import (
        TRANSFORMER_TRAINING,
        TransformerLanguageRuns,
        TransformerSetting,
    )

    task = TransformerLanguageRuns("FIRST", TransformerSetting())
    config = dataclasses.replace(TRANSFORMER_TRAINING, steps=steps, warm_steps=steps // 4)
    run_rows(task, [("joint", config)], [0], evaluate=False, device=device)  # warm-up
    size = 1024 if device == "cpu" else 8192
    a = torch.randn(size, size, dtype=torch.float64, device=device)

    def product() -> None:
        a @ a
        if device != "cpu":
            torch.cuda.synchronize()

    product()
    matmul = 2 * size**3 / median_time(product, 5)
    rows = []
    for schedules in (("joint",), TRANSFORMER_SCHEDULES):
        pairs = [(name, config) for name in schedules]
        start = time.perf_counter()
        run_rows(task, pairs, range(100, 100 + seeds), evaluate=False, device=device)
        elapsed = time.perf_counter() - start
        batched = seeds / elapsed
        start = time.perf_counter()
        for seed in range(100, 100 + looped_seeds):
            run_rows(task, pairs, [seed], evaluate=False, device=device)
        looped = looped_seeds / (time.perf_counter() - start)
        task.to(torch.device("cpu"))  # the FLOPs are counted on the CPU
        draws = standard_draws(task, range(seeds))
        params = {k: v.expand(len(schedules), *v.shape).clone().requires_grad_(True) for k, v in draws.items()}
        batch = task.training_stream(range(seeds), 1, config.batch_size).batch(0)
        with FlopCounterMode(display=False) as counter:
            torch.autograd.grad(task.losses(params, batch).sum(), list(params.values()))
        achieved = counter.get_total_flops() * steps / elapsed
        rows.append(
            (
                f"transformer (FIRST, d = 16, 2 heads, 1 layer, N0 = 16, batch 32, {steps} steps, {device}), "
                f"{len(schedules)} schedule(s): seeds/s at S = {seeds} batched vs one seed at a time",
                f"{batched:.2f} vs {looped:.2f} seeds/s ({batched / looped:.1f}x)",
            )
        )
        rows.append(
            (
                "same, batched: achieved FLOP/s (matrix products, forward and backward) vs a float64 "
                f"{size} x {size} matmul",
                f"{achieved / 1e9:.2f} vs {matmul / 1e9:.1f} GFLOP/s ({achieved / matmul:.1%})",
            )
        )
    return rows


def timed_command(command: list[str]) -> float:
    """Wall time in seconds of one run of a command in the repository root."""
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def test_rows() -> list[Row]:
    """The README's test command, serially (-n 0) and on two workers (the pytest.ini default)."""
    serial = timed_command([sys.executable, "-m", "pytest", "-q", "-n", "0"])
    parallel = timed_command([sys.executable, "-m", "pytest", "-q"])
    return [
        ("`python -m pytest -n 0` (serial: unit tests and every notebook under nbval)", f"{serial:.0f} s", "1"),
        (
            "`python -m pytest` (two workers, one kernel per notebook)",
            f"{parallel:.0f} s",
            f"{parallel / serial:.2f}x serial",
        ),
    ]


def book_rows() -> list[Row]:
    """The cold and cached book builds."""
    build = ROOT / "_build_bench"
    shutil.rmtree(build, ignore_errors=True)
    jb = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "--path-output", str(build)]
    cold = timed_command(jb)
    cached = timed_command(jb)
    shutil.rmtree(build, ignore_errors=True)
    return [
        ("book build, cold (every notebook executed)", f"{cold:.0f} s", "1"),
        (
            "book build, cached (nothing changed: Sphinx rereads nothing)",
            f"{cached:.0f} s",
            f"{cached / cold:.2f}x cold",
        ),
    ]


CERTIFIED_TWINS = [
    ("setting", "lem-strip on its whole strip, six u", "def phi_terms(", "C.strip_certificate("),
    ("threshold", "thm-threshold (b) on t in [1.001, 200]", "brute_lengths = np.arange(", "C.margin_certificate("),
    ("threshold", "thm-threshold (c) on r in [1.5, 256.5]", "x_grid = np.linspace(", "C.loss_bound_certificate("),
]
"""The certified cells that decide a statement on a whole interval and their float twins: (chapter,
statement, a line of the float check's source, a line of the certified cell's source)."""


def certified_rows() -> list[Row]:
    """Each whole-range certified cell against the float check of the same statement: both timed as the
    chapter runs them (a fresh kernel executes the chapter; nbclient records each cell's start and end)."""
    import nbformat
    from nbclient import NotebookClient

    rows, timed = [], {}
    for chapter in sorted({twin[0] for twin in CERTIFIED_TWINS}):
        notebook = nbformat.read(ROOT / "book" / f"{chapter}.ipynb", as_version=4)
        NotebookClient(notebook, timeout=1800, resources={"metadata": {"path": str(ROOT / "book")}}).execute()
        timed[chapter] = notebook

    def seconds(chapter: str, marker: str) -> float:
        (cell,) = [cell for cell in timed[chapter].cells if cell.cell_type == "code" and marker in cell.source]
        stamps = cell.metadata.execution
        start, end = (_timestamp(stamps[key]) for key in ("iopub.execute_input", "shell.execute_reply"))
        return end - start

    for chapter, statement, float_marker, certified_marker in CERTIFIED_TWINS:
        float_time, certified_time = seconds(chapter, float_marker), seconds(chapter, certified_marker)
        rows.append((f"{chapter}: {statement}, float check", f"{float_time:.2f} s", "1"))
        rows.append(
            (
                "same, certified cell (whole range)",
                f"{certified_time:.2f} s",
                f"{certified_time / float_time:.1f}x float",
            )
        )
    return rows


def _timestamp(text: str) -> float:
    """Seconds of an ISO timestamp as nbclient writes it (2026-12-04T17:03:23.123456Z)."""
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


MEMORY_CALLS = (
    # (entry point, a call of moderate size with {budget} for its memory_budget)
    (
        "population, uniform counts (exact sum)",
        "population((0.0, 0.5), (-1.0, 2.0), Data(PowerLaw(3), 'uniform', tol=1e-6), tail='bounded',"
        " memory_budget={budget})",
    ),
    (
        "population, binomial counts (exact sum)",
        "population((0.0, 0.5), (-1.0, 2.0), Data(PowerLaw(3), BinomialCount(0.3), tol=1e-6), tail='bounded',"
        " memory_budget={budget})",
    ),
    (
        "population, one b (exact sum)",
        "population((0.0, 0.5), (-1.0, 2.0), Data(PowerLaw(2.2), tol=1e-7), tail='bounded', memory_budget={budget})",
    ),
    (
        "population, tail expansion",
        "population((0.0, 0.5), (-3.0, 18.0), Data(PowerLaw(3), 'uniform', tol=1e-9), tail='expanded',"
        " memory_budget={budget})",
    ),
    (
        "attention_factor",
        "attention_factor((-1.0, 1.0), Data(PowerLaw(3), 'uniform', tol=1e-6), memory_budget={budget})",
    ),
    ("mean_b_fraction", "mean_b_fraction(Data(PowerLaw(2.5), BinomialCount(0.3), tol=1e-5), memory_budget={budget})"),
    ("first_marker_factor", "first_marker_factor((-1.0, 1.0), PowerLaw(3.5), tol=1e-8, memory_budget={budget})"),
    ("length draws (LengthDistribution.sample)", "PowerLaw(2.5).sample(10**6, rng, 1e-6, memory_budget={budget})"),
    (
        "a batch of strings (DataSampler.sample)",
        "DataSampler(Data(PowerLaw(2.5), 'uniform', tol=1e-4), memory_budget={budget}).sample(200_000, rng)",
    ),
    (
        "a run of steps (run_schedule)",
        "run_schedule(output_only(2000, 0.1), Data(Geometric(10), tol=1e-6), memory_budget={budget})",
    ),
    (
        "pooled_weight broadcast",
        "pooled_weight(np.arange(1.0, 3001.0)[:, None], 1, np.linspace(-1, 1, 300), memory_budget={budget})",
    ),
    (
        "pooled_weight_dt broadcast",
        "pooled_weight_dt(np.arange(1.0, 3001.0)[:, None], 1, np.linspace(-1, 1, 300), memory_budget={budget})",
    ),
    ("a count table (CountDistribution.table)", "UniformCount().table(np.arange(1, 2001), memory_budget={budget})"),
    ("a one-b count table (OneB.table)", "OneB().table(np.arange(1, 2 * 10**5), memory_budget={budget})"),
    ("a binomial count table", "BinomialCount(0.3).table(np.arange(1, 1001), memory_budget={budget})"),
    (
        "pooled_log_odds broadcast",
        "pooled_log_odds(np.arange(1.0, 3001.0)[:, None], 1, np.linspace(-1, 1, 300), memory_budget={budget})",
    ),
    ("exact geometric draws (Geometric.sample)", "Geometric(10).sample(10**6, rng, 1e-6, memory_budget={budget})"),
    (
        "phase_one_output",
        "phase_one_output(0.5, Data(PowerLaw(2.5), BinomialCount(0.3), tol=1e-5), memory_budget={budget})",
    ),
    (
        "tail_expansion (called alone)",
        "tail_expansion(PowerLaw(3), UniformCount(), 0.5, -3.0, 18.0, True, 1e-9, 1e-9, memory_budget={budget})",
    ),
    ("a step plan (step_plan)", "step_plan([output_only(20_000, 0.1)] * 4, memory_budget={budget})"),
    (
        "the training loop (descend), numpy steps",
        "descend([output_only(20_000, 0.1)], *numpy_oracle(), memory_budget={budget})",
    ),
    (
        "a mini-batch run (run_sampled; torch)",
        "run_sampled(output_only(3, 0.1), Data(PowerLaw(2.5), 'uniform', tol=1e-4), 200_000, 0, memory_budget={budget})",
    ),
    (
        "ShallowTransformer, ReLU readout, and one Adam step (torch)",
        "adam_step(ShallowTransformer(50_000, 'ffn', 64, memory_budget={budget}))",
    ),
    (
        "ShallowTransformer, ReLU readout 2 x 500000, and one Adam step (torch)",
        "adam_step(ShallowTransformer(2, 'ffn', 500_000, memory_budget={budget}))",
    ),
    (
        "ShallowTransformer, linear readout, and one Adam step (torch)",
        "adam_step(ShallowTransformer(10**6, memory_budget={budget}))",
    ),
)
"""Every public call that takes a ``memory_budget`` has a row (``tests/test_benchmark_script.py`` checks it), except
those of :data:`MEMORY_EXEMPT`. A model's row trains it through the package's optimiser (``adam_step``: one step of
Adam, the optimiser with the most state, on one string)."""
MEMORY_EXEMPT = ("plan_fits", "check_memory_budget", "require_memory", "require_sum_memory")
"""The public calls with a ``memory_budget`` and no row: ``plan_fits`` allocates nothing (it asks whether a plan
would fit) and the other three are the budget's own checks."""

MEMORY_SCRIPT = """
import gc, sys, tracemalloc
import numpy as np
import torch
from lagtheory import BinomialCount, Data, Geometric, OneB, PowerLaw, ShallowTransformer, UniformCount, pooled_weight
from lagtheory import pooled_log_odds, population
from lagtheory.attention_step import attention_factor, first_marker_factor, mean_b_fraction, phase_one_output
from lagtheory.heavy_tail import tail_expansion
from lagtheory.pooling import pooled_weight_dt
from lagtheory.population_gd import run_schedule
from lagtheory.sampled import DataSampler, run_sampled
from lagtheory.schedules import joint, output_only, step_plan
from lagtheory.training import NumpyGradientDescent, TorchGroupOptimiser, descend
torch.set_num_threads(1)
rng = np.random.default_rng(0)
call = sys.argv[1]


def accepted(budget):
    try:
        eval(call.format(budget=budget))
        return True
    except ValueError as error:
        if "memory_budget" not in str(error) and "fit" not in str(error):
            raise
        return False


# the smallest budget the call is let through with (to 1 percent), by bisection in log scale: its estimate
low, high = 1, 2**31
assert accepted(high) and not accepted(low)
while high > 1.01 * low:
    middle = int((low * high) ** 0.5)
    low, high = (low, middle) if accepted(middle) else (middle, high)
resident, traced = peaks(lambda: eval(call.format(budget=high)))  # tests/test_memory.py's PEAK_PROBE
print(high, traced, resident)
"""


def memory_peaks(call: str) -> tuple[int, int, int]:
    """(estimate, tracemalloc's peak, the resident set's peak growth) of one of :data:`MEMORY_CALLS`' calls, in bytes,
    in a fresh interpreter (:data:`MEMORY_SCRIPT` with tests/test_memory.py's ``PEAK_PROBE``, the one measurement of
    the tests and the benchmark). tracemalloc sees what numpy and Python allocate but not torch; the resident set
    sees both in blocks over 64 KiB (test_memory's ``PEAK_ENVIRONMENT``), to a page, but not small blocks
    that reuse memory freed before the call (a run of many small objects can grow it by 0 B): the measured peak is
    the larger of the two. On numpy's calls of a few MiB or more, which both see, they agree within 3 percent."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_memory import PEAK_ENVIRONMENT, PEAK_PROBE

    script = MEMORY_SCRIPT.replace("# the smallest budget", PEAK_PROBE + "\n\n# the smallest budget", 1)
    completed = subprocess.run(
        [sys.executable, "-c", script, call],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **PEAK_ENVIRONMENT},
    )
    estimate, traced, resident = (int(word) for word in completed.stdout.split()[-3:])
    return estimate, traced, resident


def memory_rows() -> list[Row]:
    """Each public entry point's memory estimate (the smallest budget that lets the call through) against its
    measured peak (the larger of tracemalloc's peak and the resident set's peak growth, in a fresh interpreter
    after a warm-up call: :func:`memory_peaks`), and the time a huge call takes to be refused
    (tests/test_memory.py's calls): the tests check that estimates bound the peaks, never a time."""
    rows = []
    for name, call in MEMORY_CALLS:
        estimate, traced, resident = memory_peaks(call)
        rows.append(
            (
                f"{name}: estimate / measured peak (tracemalloc; resident set)",
                f"{size_text(estimate)} / {size_text(max(traced, resident))} ({size_text(traced)}; {size_text(resident)})",
                f"{estimate / max(traced, resident):.2f}",
            )
        )
    sys.path.insert(0, str(ROOT / "tests"))
    from test_memory import HUGE_CALLS, SCRIPT  # the refused calls: one list for the tests and the timings

    for name, source, _ in HUGE_CALLS:
        timing = "import time\nstart = time.perf_counter()\n"
        script = SCRIPT.format(headroom=2**40).replace("results = []", timing + "results = []")
        script = script.replace("print(json.dumps(results))", "print(time.perf_counter() - start)")
        completed = subprocess.run(
            [sys.executable, "-c", script, json.dumps([source])], capture_output=True, text=True, check=True
        )
        rows.append((f"refusal of {name}", f"{float(completed.stdout.split()[-1]):.2g} s", ""))
    return rows


def table(title: str, rows: list[Row]) -> list[str]:
    """A titled Markdown table of (what, measured, ratio) rows."""
    return [
        f"**{title}**",
        "",
        "| what | measured | ratio |",
        "| --- | --- | --- |",
        *[f"| {a} | {b} | {c} |" for a, b, c in rows],
        "",
    ]


def main() -> None:
    """Run every benchmark and write benchmarks/results.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-tests", action="store_true", help="skip the serial and parallel test runs")
    parser.add_argument("--skip-book", action="store_true", help="skip the book builds")
    parser.add_argument("--only-engine", action="store_true", help="only the experiment engine's rows")
    parser.add_argument("--only-transformer", action="store_true", help="only the transformer task's rows")
    parser.add_argument("--only-certified", action="store_true", help="only the whole-range certified cells' rows")
    parser.add_argument("--only-memory", action="store_true", help="only the memory estimates' and refusals' rows")
    parser.add_argument(
        "--device", default="cpu", help="with --only-transformer: where the transformer trains (cpu or cuda)"
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[16], help="with --only-transformer: batch sizes S to measure"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.only_engine:
        for what, value in engine_rows():
            print(f"| {what} | {value} |")
        return
    if args.only_memory:
        for what, value, ratio in memory_rows():
            print(f"| {what} | {value} | {ratio} |", flush=True)
        return
    if args.only_certified:
        print(f"load average {os.getloadavg()[0]:.1f} at the start")
        for what, value, ratio in certified_rows():
            print(f"| {what} | {value} | {ratio} |", flush=True)
        return
    if args.only_transformer:
        print(f"load average {os.getloadavg()[0]:.1f} at the start")
        for seeds in args.seeds:
            for what, value in transformer_rows(seeds=seeds, device=args.device):
                print(f"| {what} | {value} |", flush=True)
        return
    load = os.getloadavg()[0]
    lines = [
        f"Measured on {platform.machine()} ({os.cpu_count()} cores, load average {load:.1f} at the start),"
        f" Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__},"
        f" one thread per process, {time.strftime('%Y-%m-%d')}.",
        "",
    ]
    lines += table("Per-call overhead: package against a bare evaluation of the same sums", overhead_rows())
    lines += table("Exact sums against Monte Carlo at matched accuracy", monte_carlo_rows())
    lines += table(
        "Heavy tails: power-law sums at tol 1e-12, term by term against the tail expansion", heavy_tail_rows()
    )
    lines += table("Count-based against token-level evaluation", evaluation_rows())
    lines += table("Certified on whole ranges against the float check of the same statement", certified_rows())
    lines += table("Memory: each entry point's estimate against its measured peak; refusal times", memory_rows())
    lines += table(
        "Vectorised against looped seeds (the experiments engine)",
        [(what, value, "") for what, value in engine_rows()],
    )
    lines += table(
        "The standard small transformer: batched seeds, and achieved FLOP/s",
        [(what, value, "") for what, value in transformer_rows()],
    )
    if not args.skip_tests:
        lines += table("Tests: serial against two workers", test_rows())
    if not args.skip_book:
        lines += table("Book build", book_rows())
    text = "\n".join(lines)
    print(text)
    (ROOT / "benchmarks" / "results.md").write_text(text)


if __name__ == "__main__":
    main()
