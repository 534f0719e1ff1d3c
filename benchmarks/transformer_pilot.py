"""EXPLORATORY pilot of the standard small transformer (the first configuration of its chapter): recognition per schedule, language and
test length. Not a confirmatory record and not a study record: a handful of seeds (100-105, outside the
seeds 30-89 reserved for the confirmatory study), the uncalibrated regime TRANSFORMER_TRAINING with 400
steps, nothing tuned. Run from the repository root:  python benchmarks/transformer_pilot.py [--positions sinusoidal] [LANGUAGE ...]
It prints a Markdown table and writes it to benchmarks/transformer_pilot_<positions>.md."""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lagtheory.experiments.engine.cells import run_cell  # noqa: E402
from lagtheory.experiments.tasks.transformer.languages import TRANSFORMER_LANGUAGES  # noqa: E402
from lagtheory.experiments.tasks.transformer.task import (  # noqa: E402
    TRANSFORMER_TRAINING,
    TransformerLanguageRuns,
    TransformerSetting,
)

SEEDS = tuple(range(100, 106))
SCHEDULES = ("joint", "lag", "three-phase", "lead", "two-timescale-0.1", "two-timescale-3")
CONFIG = dataclasses.replace(TRANSFORMER_TRAINING, steps=400, warm_steps=100)
SETTING = TransformerSetting()


def main() -> None:
    """Train every schedule on every seed of every language and print recognition and accuracy."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", choices=("learned", "sinusoidal"), default="learned")
    parser.add_argument("languages", nargs="*", default=list(TRANSFORMER_LANGUAGES))
    args = parser.parse_args()
    setting = dataclasses.replace(SETTING, positions=args.positions)
    torch.set_num_threads(1)
    lengths = SETTING.lengths
    lines = [
        f"EXPLORATORY pilot (not a confirmatory record): seeds {SEEDS[0]}-{SEEDS[-1]}, Adam lr "
        f"{CONFIG.output_lr}, {CONFIG.steps} steps (lag/lead warm-up {CONFIG.warm_steps}), batch "
        f"{CONFIG.batch_size}, d = 16, 2 heads, 1 layer, {args.positions} positions, N0 = {SETTING.max_train_length}; "
        f"recognised at n = every random and hard test word of length n right (counts of {len(SEEDS)} seeds); "
        "accuracy = mean over seeds on the random words.",
        "",
        "| language | schedule | final loss | "
        + " | ".join(f"recognised at {n}" for n in lengths)
        + " | "
        + " | ".join(f"accuracy at {n}" for n in lengths)
        + " | hard accuracy at "
        + str(lengths[-1])
        + " |",
        "| --- " * (3 + 2 * len(lengths) + 1) + "|",
    ]
    start = time.perf_counter()
    for language in args.languages:
        result = run_cell(TransformerLanguageRuns(language, setting), CONFIG, SCHEDULES, SEEDS)
        m = result.metrics
        for row, schedule in enumerate(result.schedules):
            final = np.nanmean(result.losses[row, :, -20:])
            recognised = " | ".join(str(int(m["recognised_at"][row, :, j].sum())) for j in range(len(lengths)))
            accuracy = " | ".join(f"{m['accuracy'][row, :, j].mean():.3f}" for j in range(len(lengths)))
            hard = m["hard_accuracy"][row, :, -1].mean()
            lines.append(f"| {language} | {schedule} | {final:.3f} | {recognised} | {accuracy} | {hard:.3f} |")
        print(f"{language} done after {time.perf_counter() - start:.0f} s", flush=True)
    lines += ["", f"Wall time {time.perf_counter() - start:.0f} s on one thread."]
    text = "\n".join(lines)
    print(text)
    (Path(__file__).resolve().parent / f"transformer_pilot_{args.positions}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
