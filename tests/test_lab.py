"""The lab worksheet (book/lab.md) works as written.

Its command must be one the run command accepts, writing into the git-ignored ``runs/`` folder (never
``book/data``); its Python blocks, run in order, must work on a record of the study they read. Here they
read the book's own record of the regression study in place of a student's run (the same format; the run
itself takes minutes and is timed in the report, not here).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from lagtheory.experiments import run

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "book" / "lab.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", LAB.read_text(), re.M | re.S)


def commands() -> list[str]:
    """The lab's run commands, a command continued over lines (a trailing backslash) as one line."""
    lines = [line for block in blocks("bash") for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines if "lagtheory.experiments.run regression" in line]


def test_the_labs_commands_are_accepted_and_write_to_the_ignored_runs_folder():
    # the lab's run and its smaller run for slow machines, which the rest of the worksheet reads the same way
    assert len(commands()) == 2
    outputs = set()
    for line in commands():
        arguments = shlex.split(line)[3:]
        parse = run.parser()
        args = parse.parse_args(arguments)
        run.check(args, parse)
        assert args.study == "regression" and Path(args.output).parts[0] == "runs"
        ignored = subprocess.run(["git", "check-ignore", "-q", str(args.output)], cwd=ROOT, check=False)
        assert ignored.returncode == 0, f"{args.output} is not ignored by git"
        outputs.add(args.output)
    assert len(outputs) == 1, "both runs must write the record the worksheet reads"


def test_the_labs_python_runs_in_order_on_a_record_of_the_study(tmp_path):
    """The blocks read runs/lab/summary_regression.json (the student's) and book/data (the book's)."""
    output = next(
        shlex.split(line)[shlex.split(line).index("--output") + 1] for line in commands() if "--output" in line
    )
    (tmp_path / output).parent.mkdir(parents=True)
    shutil.copy(ROOT / "book" / "data" / "summary_regression.json", tmp_path / output)
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "data").symlink_to(ROOT / "book" / "data")
    script = "import matplotlib\nmatplotlib.use('Agg')\n" + "\n".join(blocks("python"))
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MPLBACKEND": "Agg"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "lag - joint:" in result.stdout and "main grid, SGD, lag against joint:" in result.stdout
    # the interval printed beside a p-value agrees with it: it excludes 0 exactly when p < 0.05
    low, high, p = re.search(r"centre, SGD: t interval \[(\S+), (\S+)\], p = (\S+)", result.stdout).groups()
    assert (float(low) > 0 or float(high) < 0) == (float(p) < 0.05), (low, high, p)
