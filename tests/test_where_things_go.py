"""Where things go, written down and kept true: every module of the package is named by its package's docstring
and by the README's module map, and the contributing page's table (a schedule, a language, a task, a metric, a
statistic, a study, a chapter -> module, test, record) names only files that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lagtheory"
MODULES = sorted(path for path in PACKAGE.rglob("*.py") if path.name != "__init__.py")
PACKAGES = sorted(path.parent for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE)


def named_by(path: Path, text: str) -> bool:
    """Whether ``text`` names the module or package at ``path``: its dotted name, or its file or folder name."""
    relative = path.relative_to(ROOT).with_suffix("")
    dotted = ".".join(relative.parts)
    own = f"{path.name}" if path.suffix == ".py" else f"{path.name}/"
    return dotted in text or re.search(rf"(?<![\w/]){re.escape(own)}", text) is not None


@pytest.mark.parametrize("path", MODULES + PACKAGES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_each_module_is_named_by_its_package_docstring(path):
    package = path.parent
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert named_by(path, docstring), f"{package.relative_to(ROOT)}/__init__.py's docstring does not name {path.name}"


def readme_map() -> dict[str, str]:
    """Folder (``lagtheory/.../``) -> its line of the README's module map."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The package, module by module", 1)[1].split("\n## ", 1)[0]
    return {match[1]: match[2] for match in re.finditer(r"^- `(lagtheory/[\w/]*)`: (.*)$", section, re.MULTILINE)}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_each_module_is_named_by_the_readme(path):
    folder = f"{path.parent.relative_to(ROOT)}/"
    lines = readme_map()
    assert folder in lines, f"the README's module map has no line for {folder}"
    assert f"`{path.name}`" in lines[folder], f"the README's line for {folder} does not name {path.name}"


def where_table() -> dict[str, str]:
    """What is added (first column) -> the rest of its row, of the contributing page's table."""
    text = (ROOT / "book" / "contributing.md").read_text(encoding="utf-8")
    section = text.split("## Where things go", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| a")]
    return {row.split("|")[1].strip(): row for row in rows}


def test_the_table_says_where_each_kind_of_addition_goes():
    table = where_table()
    assert list(table) == [
        "a schedule",
        "a language",
        "a task",
        "a metric",
        "a statistic",
        "a study",
        "a chapter",
    ]
    for row in table.values():
        assert len(row.split("|")) == 6, row  # to add, module, test, record
    missing = []
    for row in table.values():
        for name in re.findall(r"`([\w/.<>-]+\.py)`", row):
            if "<" in name:
                continue
            candidates = [ROOT / name, PACKAGE / name, PACKAGE / "experiments" / name, ROOT / "tests" / name]
            if not any(candidate.is_file() for candidate in candidates):
                missing.append(name)
    assert not missing, f"files the table names that do not exist: {missing}"


def test_a_planted_module_is_found_unnamed(tmp_path):
    text = "- :mod:`~lagtheory.experiments.exploratory.outcomes`: ...\n    balls.py   ..."
    assert named_by(PACKAGE / "experiments" / "exploratory" / "outcomes.py", text)
    assert named_by(PACKAGE / "certified" / "balls.py", text)
    assert not named_by(PACKAGE / "experiments" / "exploratory" / "newjob.py", text)
    assert not named_by(PACKAGE / "certified" / "laws.py", "outlaws.py")
