"""The stored outputs of every notebook print only what holds on any machine.

nbval compares each re-executed cell with its stored output, and the last bits of a
float64 result depend on the CPU (SIMD kernels of exp, log, BLAS). So a stored output
must not show

* a float whose magnitude is below 1e-9 (exact zeros aside): a rounding-level gap
  should be printed as the bound it meets, ``|gap| < 1e-12`` (a number right after
  ``<``, ``<=`` or ``≤`` is such a bound and is allowed);
* a float with more than 8 significant digits (a bare repr, or too many digits);
* in a cell that reports statistics of random draws, a float with more than 4 significant
  digits: its sampling error is far larger than the digits left out. Such a cell is one of
  the empirical chapters or the verdict (everything they print is computed from seeded
  runs), or one whose source draws random numbers (``RANDOM_SOURCE``).

A cell that must show such a number (an exactly computed tail probability of 1e-30,
say) says why in a comment line ``# stored-output-exempt: <reason>`` in its source. A
cell that draws random numbers but prints no statistic of them (a seeded random instance
of a closed form, say) says so in ``# stored-output-not-a-statistic: <reason>``; the
first two rules still hold there. Glued values (myst-nb's ``glue``) obey the same rules.
See lagtheory.reporting and the Contributing page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))
MAX_DIGITS = 8
STATISTIC_DIGITS = 4
SMALLEST = 1e-9
EXEMPT = re.compile(r"^[ \t]*#[ \t]*stored-output-exempt:[ \t]*(?P<reason>\S.*)$", re.M)
NOT_A_STATISTIC = re.compile(r"^[ \t]*#[ \t]*stored-output-not-a-statistic:[ \t]*(?P<reason>\S.*)$", re.M)
# Notebooks whose every printed number derives from seeded runs (per-seed records, bootstrap).
STATISTICS_NOTEBOOKS = ("empirical_", "verdict", "confirmatory")
# A cell that draws random numbers: numpy's and torch's generators, the package's samplers,
# and the re-runs of stored study cells.
RANDOM_SOURCE = re.compile(r"\b(?:default_rng|np\.random|manual_seed|torch\.rand\w*|run_sampled|DataSampler|rerun)\b")
# A number with a decimal point or an exponent, not glued to a word or another number
# (so "3.11.7" or "x1.5" are not read as floats).
FLOAT = re.compile(r"(?<![\w.])(?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)(?![\w.])")
BOUND_BEFORE = re.compile(r"(?:<|<=|≤|\\le|\\leq)\s*$")
TEXT_TYPES = ("text/plain", "text/markdown", "text/latex", "text/html")


def output_texts(cell: dict) -> list[str]:
    """The text stored in a code cell's outputs: streams, text data, and glued values
    (myst-nb stores ``glue(name, value)`` as ``application/papermill.record/text/plain``)."""
    texts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            texts.append("".join(output["text"]))
        for mime, data in output.get("data", {}).items():
            if mime.endswith(TEXT_TYPES):
                texts.append("".join(data))
    return texts


def significant_digits(number: str) -> int:
    """Significant digits as printed: ``0.0348101`` -> 6, ``3.713e-12`` -> 4, ``1.500`` -> 4."""
    mantissa = number.lstrip("+-").lower().split("e")[0].replace(".", "")
    return len(mantissa.lstrip("0")) or 1


def violations(text: str, statistics: bool = False) -> list[str]:
    """Each float in ``text`` that breaks a rule, with the rule and its context;
    ``statistics``: the text reports statistics of random draws (at most 4 digits)."""
    found = []
    for match in FLOAT.finditer(text):
        number = match.group("number")
        if "." not in number and "e" not in number.lower():
            continue  # integers are exact
        value = float(number)
        context = text[max(0, match.start() - 50) : match.end() + 10].replace("\n", " | ")
        bound = BOUND_BEFORE.search(text[: match.start()])
        if significant_digits(number) > MAX_DIGITS:
            found.append(f"{number} has more than {MAX_DIGITS} significant digits: ...{context}...")
        elif statistics and significant_digits(number) > STATISTIC_DIGITS and not bound:
            found.append(
                f"{number} has more than {STATISTIC_DIGITS} significant digits in a statistics cell: ...{context}..."
            )
        elif value != 0 and abs(value) < SMALLEST and not bound:
            found.append(f"{number} is below {SMALLEST:g} and not a bound: ...{context}...")
    return found


def reports_statistics(path: Path, source: str) -> bool:
    """Whether a cell of notebook ``path`` with this source reports statistics of random draws."""
    if NOT_A_STATISTIC.search(source):
        return False
    return path.stem.startswith(STATISTICS_NOTEBOOKS) or bool(RANDOM_SOURCE.search(source))


def notebook_violations(path: Path) -> list[str]:
    """Every rule violation in the stored outputs of one notebook, naming its cells."""
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or EXEMPT.search(source):
            continue
        statistics = reports_statistics(path, source)
        for text in output_texts(cell):
            found += [
                f"{path.name}, cell {index} (counting every cell from 0): {v}" for v in violations(text, statistics)
            ]
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_print_only_machine_independent_digits(notebook: Path):
    found = notebook_violations(notebook)
    assert not found, "\n".join(found)


def test_the_rules_catch_what_they_are_for():
    assert violations("worst |loss gap| 6.7e-16") == [
        "6.7e-16 is below 1e-09 and not a bound: ...worst |loss gap| 6.7e-16..."
    ]
    assert len(violations("value 0.034810176071123085")) == 1
    assert len(violations("t1 - 1 = +3.713e-12")) == 1
    assert violations("|autograd - closed form| < 1e-12, gap <= 5e-10") == []
    assert violations("exact 0.0; t1 = 1.7605640; n = 1e12; version 3.11.7") == []
    assert violations("u = [-0.25  0.75]; 12345678901 strings") == []
    assert len(violations("m = 0.2558427881")) == 1  # ten digits: more than eight
    assert violations("m = 0.25584279") == []
    assert len(violations("sd 0.40372", statistics=True)) == 1
    assert violations("sd 0.4037, rate 0.024, eta 3.103e+04; gap < 1.23456e-12", statistics=True) == []


def test_a_statistics_cell_is_found_by_its_notebook_or_its_random_source():
    assert reports_statistics(Path("verdict.ipynb"), "print(table)")
    assert reports_statistics(Path("empirical_icl.ipynb"), "print(table)")
    assert reports_statistics(Path("three_phase.ipynb"), "rng = np.random.default_rng(0)")
    assert reports_statistics(Path("three_phase.ipynb"), "runs = run_sampled(schedule, data, rng)")
    assert not reports_statistics(Path("three_phase.ipynb"), "print(population(theta, u, data).loss)")
    assert not reports_statistics(
        Path("setting.ipynb"), "# stored-output-not-a-statistic: one seeded instance\ntorch.manual_seed(0)"
    )


def test_a_marker_comment_exempts_its_cell(tmp_path: Path):
    def notebook(source: str) -> Path:
        cell = {
            "cell_type": "code",
            "metadata": {},
            "source": source,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "P(n > 100) = 7.8886e-31\n"}],
        }
        path = tmp_path / "toy.ipynb"
        path.write_text(json.dumps({"cells": [cell]}))
        return path

    assert len(notebook_violations(notebook("print(tail)"))) == 1
    assert notebook_violations(notebook("# stored-output-exempt: exact in log space\nprint(tail)")) == []
    assert len(notebook_violations(notebook("# stored-output-exempt:\nprint(tail)"))) == 1  # a reason is required


def test_glued_values_obey_the_rules(tmp_path: Path):
    glued = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"application/papermill.record/text/plain": "0.02950237247"},
    }
    cell = {"cell_type": "code", "metadata": {}, "source": "glue('sd', sd, display=False)", "outputs": [glued]}
    path = tmp_path / "toy.ipynb"
    path.write_text(json.dumps({"cells": [cell]}))
    assert len(notebook_violations(path)) == 1  # ten digits
    glued["data"]["application/papermill.record/text/plain"] = "0.04212345"
    cell["source"] = "rng = np.random.default_rng(1)\nglue('sd', sd, display=False)"
    path.write_text(json.dumps({"cells": [cell]}))
    assert len(notebook_violations(path)) == 1  # a statistic of draws with more than four digits
    glued["data"]["application/papermill.record/text/plain"] = "0.04212"
    path.write_text(json.dumps({"cells": [cell]}))
    assert notebook_violations(path) == []
