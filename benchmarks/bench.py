"""Benchmarks of the lagtheory book (figures for the issue notes and the performance page).

Run from the repository root:  python benchmarks/bench.py [--skip-book]
It prints a Markdown table and writes it to benchmarks/results.md, which the
book's performance page includes. Timings are medians of repeated runs on the
machine that runs the script; nothing here is a test.
"""

from __future__ import annotations

import argparse
import math
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from lagtheory import Geometric, PowerLaw, population, recognition
from lagtheory.model import ShallowTransformer

ROOT = Path(__file__).resolve().parents[1]
THETA, U = np.array([0.0, 1.2]), np.array([-1.0, 2.0])


def median_time(function, repeats: int) -> float:
    """Median wall time of one call, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def exact_gradient_rows() -> list[tuple[str, str]]:
    """Time the exact population loss and gradient (eq-population-loss) per length law."""
    rows = []
    for lengths in (Geometric(10.0), PowerLaw(4.0)):
        result = population(THETA, U, lengths, tol=1e-12)
        seconds = median_time(lambda lengths=lengths: population(THETA, U, lengths, tol=1e-12), 50)
        rows.append(
            (
                f"exact population loss + gradient, {lengths!r}, tol 1e-12 (N = {result.truncation_length})",
                f"{seconds * 1e3:.2f} ms",
            )
        )
    return rows


def monte_carlo_rows(samples: int = 20_000) -> list[tuple[str, str]]:
    """Monte-Carlo gradient with torch autograd on sampled strings (counts), and the
    sample size it would need to match the exact sum's accuracy."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ShallowTransformer(vocab_size=2)
    with torch.no_grad():
        model.theta.copy_(torch.tensor(THETA))
        model.u.copy_(torch.tensor(U))
    q = 1 / 10.0
    n = rng.geometric(q, size=samples).astype(float)
    positive = rng.random(samples) < 0.5
    counts = torch.tensor(np.stack([n - positive, positive.astype(float)], axis=1))
    y = torch.tensor(np.where(positive, 1.0, -1.0))

    def estimate():
        model.zero_grad()
        per_string = torch.nn.functional.softplus(-y * model.forward_counts(counts))
        per_string.mean().backward()
        return per_string

    seconds = median_time(estimate, 5)
    # per-sample standard deviation of the d/dt gradient estimate, from per-sample gradients
    per_sample = []
    for i in range(2000):
        model.zero_grad()
        torch.nn.functional.softplus(-y[i] * model.forward_counts(counts[i : i + 1])).sum().backward()
        per_sample.append(float(model.theta.grad[1]))
    sd = float(np.std(per_sample))
    per_sample_seconds = seconds / samples
    rows = [
        (
            f"Monte-Carlo gradient, torch autograd, {samples} sampled strings",
            f"{seconds * 1e3:.1f} ms (standard error {sd / math.sqrt(samples):.1e})",
        )
    ]
    for accuracy in (1e-4, 1e-12):
        needed = (sd / accuracy) ** 2
        rows.append(
            (
                f"Monte-Carlo samples for standard error {accuracy:g} (extrapolated)",
                f"{needed:.1e} samples, about {needed * per_sample_seconds:.1e} s",
            )
        )
    return rows


def evaluation_rows() -> list[tuple[str, str]]:
    """Time token-level against count-based forwards, and exact recognition."""
    rows = []
    model = ShallowTransformer(vocab_size=2)
    with torch.no_grad():
        model.theta.copy_(torch.tensor(THETA))
        model.u.copy_(torch.tensor(U))
    for n in (10**3, 10**6):
        tokens = torch.zeros(1, n, dtype=torch.long)
        tokens[0, -1] = 1
        mask = torch.ones(1, n, dtype=torch.bool)
        counts = torch.tensor([[n - 1.0, 1.0]], dtype=torch.float64)
        with torch.no_grad():
            token_s = median_time(lambda tokens=tokens, mask=mask: model(tokens, mask), 5)
            count_s = median_time(lambda counts=counts: model.forward_counts(counts), 50)
        rows.append(
            (
                f"one string a^(n-1) b, n = {n:.0e}: token-level vs count-based forward",
                f"{token_s * 1e3:.3f} ms vs {count_s * 1e3:.3f} ms ({token_s / count_s:,.0f}x)",
            )
        )
    counts = torch.tensor([[1e12 - 1, 1.0]], dtype=torch.float64)
    with torch.no_grad():
        count_s = median_time(lambda: model.forward_counts(counts), 50)
    rows.append(
        (
            "one string, n = 1e12, count-based forward (token level: impossible, 8 TB of token ids)",
            f"{count_s * 1e3:.3f} ms",
        )
    )
    seconds = median_time(lambda: recognition(THETA, U, 10**18), 20)
    rows.append(("exact recognition verdict over every string up to length 1e18", f"{seconds * 1e3:.2f} ms"))
    return rows


def engine_rows(seeds: int = 30, looped_seeds: int = 3) -> list[tuple[str, str]]:
    """Seeds per second of the experiment engine (issue 9): S = 30 seeds in one batched run against the
    same seeds run one at a time (all schedules batched in both), and against one schedule and one seed
    at a time (the loop of the old protocol). The looped rates are measured on ``looped_seeds`` seeds."""
    from lagtheory.experiments.engine import run_cell
    from lagtheory.experiments.studies import STUDIES
    from lagtheory.schedules import SCHEDULE_NAMES

    rows = []
    for name, cell_index in (("languages", 2), ("regression", 0), ("icl", 0)):
        study = STUDIES[name]
        cell = study.cells[cell_index]
        task = study.build(cell.name, cell.setting)
        run_cell(task, cell.training, ["joint"], [0])  # warm-up: imports, test sets
        start = time.perf_counter()
        run_cell(task, cell.training, SCHEDULE_NAMES, range(seeds))
        batched = seeds / (time.perf_counter() - start)
        start = time.perf_counter()
        for seed in range(looped_seeds):
            run_cell(task, cell.training, SCHEDULE_NAMES, [seed])
        looped = looped_seeds / (time.perf_counter() - start)
        start = time.perf_counter()
        for seed in range(looped_seeds):
            for schedule in SCHEDULE_NAMES:
                run_cell(task, cell.training, [schedule], [seed])
        single = looped_seeds / (time.perf_counter() - start)
        rows.append(
            (
                f"engine, {name} ({cell.name}), {len(SCHEDULE_NAMES)} schedules: seeds/s at S = {seeds} batched "
                "vs seeds one at a time vs schedule and seed one at a time",
                f"{batched:.2f} vs {looped:.2f} vs {single:.2f} seeds/s ({batched / looped:.1f}x, {batched / single:.1f}x)",
            )
        )
    return rows


def timed_command(command: list[str]) -> float:
    """Wall time in seconds of one run of a shell command in the repository root."""
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def book_rows() -> list[tuple[str, str]]:
    """Time the nbval run and the cold and cached book builds."""
    rows = [
        (
            "full nbval run over every notebook (strict)",
            f"{timed_command([sys.executable, '-m', 'pytest', 'book', '-q']):.0f} s",
        )
    ]
    build = ROOT / "_build_bench"
    shutil.rmtree(build, ignore_errors=True)
    jb = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "--path-output", str(build)]
    rows.append(("book build, cold (every notebook executed)", f"{timed_command(jb):.0f} s"))
    rows.append(("book build, cached (nothing changed: Sphinx rereads nothing)", f"{timed_command(jb):.0f} s"))
    shutil.rmtree(build, ignore_errors=True)
    return rows


def main() -> None:
    """Run every benchmark and write benchmarks/results.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-book", action="store_true", help="skip the nbval and book-build timings")
    parser.add_argument("--only-engine", action="store_true", help="only the experiment engine's rows")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.only_engine:
        for what, value in engine_rows():
            print(f"| {what} | {value} |")
        return
    rows = exact_gradient_rows() + monte_carlo_rows() + evaluation_rows() + engine_rows()
    if not args.skip_book:
        rows += book_rows()
    lines = [
        f"Measured on {platform.machine()}, {platform.python_version()}, torch {torch.__version__}, "
        f"numpy {np.__version__}, one torch thread, {time.strftime('%Y-%m-%d')}.",
        "",
        "| what | time |",
        "| --- | --- |",
        *[f"| {what} | {value} |" for what, value in rows],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "benchmarks" / "results.md").write_text(text)


if __name__ == "__main__":
    main()
