"""Check the LaTeX log of the book's PDF: no wide overfull box, no undefined reference, no printed code.

usage: python tests/pdf_log_check.py [_build/latex/lagtheory.log] [--max-overfull-pt 3]

README's third command runs it after ``jupyter-book build . --builder pdflatex``.
It reads the log that latexmk left (the last LaTeX pass, so references that a
later pass resolved are not counted) and fails (exit status 1) when

* an overfull box sticks out by more than ``--max-overfull-pt`` points (an
  ``\\hbox`` too wide: text or a table cut at the page edge; a ``\\vbox`` too
  high: content run over the footer), or
* any reference, hyper-reference or citation is undefined (a link that goes
  nowhere in the PDF), or
* a float (a figure with its caption) is too large for a page: LaTeX sets it
  anyway, and its caption runs into the page's foot, or
* a chapter prints source code (read from the ``.tex``): the code of a notebook
  cell (myst-nb's ``cell_input``), or any block highlighted as Python in a
  document that has notebook cells. The PDF prints the cells' outputs only
  (``book/_ext/latex_layout.py``); code blocks of the pages about the book (the
  contributing guide's commands, say) are not chapters' code and stay.

It prints the counts either way: overfull boxes, how many are over 50 pt, the
widest, and the undefined references, each with its line in the ``.tex`` file
and the chapter that line belongs to (read from the ``.tex`` beside the log).

TeX wraps its log at ``max_print_line`` (79) characters; :func:`unwrap` joins
such lines back before matching, so a warning split over two lines is still
found. A box's line number counts lines of the file TeX was reading: a box
reported after the log opens the index (``(./<name>.ind``) or while it reads the
table of contents (``(./<name>.toc`` up to ``\tf@toc``) is placed there, not in
the chapter that the same line number of the ``.tex`` file belongs to.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

WRAP = 79  # TeX's default max_print_line: a log line of exactly this length continues on the next
OVERFULL = re.compile(
    r"Overfull \\(?P<kind>[hv])box \((?P<points>[0-9.]+)pt too (?:wide|high)\)"
    r"(?: in (?:paragraph|alignment) at lines (?P<first>\d+)--\d+| detected at line (?P<at>\d+)"
    r"| has occurred while \\output is active)?"
)
FLOAT_TOO_LARGE = re.compile(r"Float too large for page by (?P<points>[0-9.]+)pt on input line (?P<line>\d+)")
NAME_UNDEFINED = re.compile(
    r"(?P<what>Reference|Hyper reference|Citation) `(?P<name>[^']*)' on page \S+ undefined"
    r"(?: on input line (?P<line>\d+))?"
)


@dataclass(frozen=True)
class Overfull:
    """One overfull box: ``kind`` "h" (too wide) or "v" (too high), by ``points``, at a .tex line if known."""

    kind: str
    points: float
    line: int | None
    part: str = ""  # "index" or "table of contents" when TeX was reading that file, else ""


@dataclass(frozen=True)
class Undefined:
    """One undefined reference, hyper-reference or citation, at a .tex line if known."""

    what: str
    name: str
    line: int | None


def unwrap(log: str, width: int = WRAP) -> str:
    """The log with TeX's hard wraps undone: a line of exactly ``width`` characters runs on."""
    out: list[str] = []
    runs_on = False
    for line in log.splitlines():
        if runs_on:
            out[-1] += line
        else:
            out.append(line)
        runs_on = len(line) == width
    return "\n".join(out)


def overfull_boxes(log: str) -> list[Overfull]:
    """Every overfull box the (unwrapped) log reports."""
    text = unwrap(log)
    index = re.search(r"\(\./[^\s()]+\.ind\b", text)
    contents = []  # (start, end) of each stretch in which TeX reads the table of contents
    for m in re.finditer(r"\(\./[^\s()]+\.toc\b", text):
        end = text.find("\\tf@toc", m.end())
        contents.append((m.start(), end if end >= 0 else len(text)))
    boxes = []
    for m in OVERFULL.finditer(text):
        line = m["first"] or m["at"]
        part = ""
        if index and m.start() > index.start():
            part = "index"
        elif any(start < m.start() < end for start, end in contents):
            part = "table of contents"
        boxes.append(Overfull(m["kind"], float(m["points"]), int(line) if line else None, part))
    return boxes


def undefined_references(log: str) -> list[Undefined]:
    """Every named undefined reference, hyper-reference or citation, and LaTeX's summary warning."""
    text = unwrap(log)
    found = [
        Undefined(m["what"].lower(), m["name"], int(m["line"]) if m["line"] else None)
        for m in NAME_UNDEFINED.finditer(text)
    ]
    if not found and "There were undefined references" in text:
        found.append(Undefined("reference", "(LaTeX: there were undefined references)", None))
    if "There were undefined citations" in text and not any(u.what == "citation" for u in found):
        found.append(Undefined("citation", "(LaTeX: there were undefined citations)", None))
    return found


CELL_INPUT = re.compile(r"\\begin\{sphinxuseclass\}\{cell_input\}")
NOTEBOOK_CELL = re.compile(r"\\begin\{sphinxuseclass\}\{cell\}")
VERBATIM = re.compile(r"\\begin\{sphinxVerbatim\}.*?\\end\{sphinxVerbatim\}", re.S)
# Pygments' Python tokens that no printed output has: keywords, names of modules and functions.
PYTHON_TOKEN = re.compile(r"\\PYG\{(?:k|kn|kc|kd|k\+kn|k\+kc|k\+kd|n\+nn|nf|n\+nf)\}")


def printed_code(tex: str) -> list[tuple[int, str]]:
    """(.tex line, document) of each piece of source code a chapter prints: a notebook cell's code,
    or a block highlighted as Python in a document that has notebook cells."""
    starts = chapters_by_line(tex)

    def line_of(position: int) -> int:
        return tex.count("\n", 0, position) + 1

    notebooks = {where(line_of(m.start()), starts) for m in NOTEBOOK_CELL.finditer(tex)}
    found = {(line_of(m.start()), where(line_of(m.start()), starts)) for m in CELL_INPUT.finditer(tex)}
    inputs = {line for line, _ in found}
    for block in VERBATIM.finditer(tex):
        line = line_of(block.start())
        if line - 1 in inputs:  # the code of a cell counted above
            continue
        if where(line, starts) in notebooks and PYTHON_TOKEN.search(block.group()):
            found.add((line, where(line, starts)))
    return sorted(found)


def chapters_by_line(tex: str) -> list[tuple[int, str]]:
    """(first .tex line, document name) of each source document in Sphinx's LaTeX output."""
    starts = []
    for number, line in enumerate(tex.splitlines(), start=1):
        m = re.search(r"\\label\{\\detokenize\{(?P<doc>[^:}]+)::doc\}\}", line)
        if m:
            starts.append((number, m["doc"]))
    return starts


def where(line: int | None, starts: list[tuple[int, str]]) -> str:
    """The document a .tex line belongs to ("book/verdict"), or "" when unknown."""
    if line is None:
        return ""
    doc = ""
    for first, name in starts:
        if first > line:
            break
        doc = name
    return doc


def report(log: str, tex: str, max_points: float) -> tuple[list[str], bool]:
    """The lines to print, and whether the log passes."""
    boxes = overfull_boxes(log)
    undefined = undefined_references(log)
    starts = chapters_by_line(tex)
    wide = [b for b in boxes if b.points > max_points]
    lines = [
        f"overfull boxes: {len(boxes)} ({sum(b.kind == 'h' for b in boxes)} too wide, "
        f"{sum(b.kind == 'v' for b in boxes)} too high); over 50 pt: {sum(b.points > 50 for b in boxes)}; "
        f"widest: {max((b.points for b in boxes), default=0):.1f} pt; over {max_points:g} pt: {len(wide)}",
        f"undefined references: {len(undefined)} ({len({u.name for u in undefined})} distinct)",
    ]
    for b in sorted(wide, key=lambda b: -b.points):
        place = f"{b.part}, line {b.line or '?'}" if b.part else f".tex line {b.line or '?'} {where(b.line, starts)}"
        lines.append(f"  overfull \\{b.kind}box {b.points:.1f} pt at {place}")
    for u in undefined:
        lines.append(f"  undefined {u.what} {u.name!r} at .tex line {u.line or '?'} {where(u.line, starts)}")
    code = printed_code(tex)
    lines.insert(2, f"source code printed in chapters: {len(code)} blocks")
    lines += [f"  source code printed at .tex line {line} {doc}" for line, doc in code]
    floats = [(float(m["points"]), int(m["line"])) for m in FLOAT_TOO_LARGE.finditer(unwrap(log))]
    lines.insert(3, f"floats too large for a page: {len(floats)}")
    lines += [
        f"  float too large by {points:.1f} pt at .tex line {line} {where(line, starts)}" for points, line in floats
    ]
    return lines, not wide and not undefined and not code and not floats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("log", nargs="?", default="_build/latex/lagtheory.log", type=Path)
    parser.add_argument(
        "--max-overfull-pt", type=float, default=3.0, help="widest overfull box allowed, in points (default 3)"
    )
    args = parser.parse_args(argv)
    if args.max_overfull_pt < 0:
        parser.error(f"--max-overfull-pt must be >= 0, got {args.max_overfull_pt}")
    if not args.log.is_file():
        parser.error(f"no LaTeX log at {args.log}: build the PDF first (README, third command)")
    log = args.log.read_text(encoding="latin-1")
    tex_path = args.log.with_suffix(".tex")
    tex = tex_path.read_text(encoding="utf-8") if tex_path.is_file() else ""
    lines, ok = report(log, tex, args.max_overfull_pt)
    print("\n".join(lines))
    print("PDF log check " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
