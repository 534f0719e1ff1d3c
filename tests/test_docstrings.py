"""The package's docstrings follow one convention (numpydoc), cite only labels the book defines,
and their examples run.

The API pages (book/api.md and book/api/*.md) render the docstrings with sphinx.ext.napoleon; the nitpicky build
(``-n``) resolves their cross-references. This module checks what the build cannot see or sees
only when the book is built: every book label a docstring cites exists in the book's sources;
no Google-style section (``Args:``, ``Attributes:``, ...) is left, which napoleon (numpydoc
sections only) would show as text; a numpydoc ``Parameters`` section names parameters the
callable has; in every module (but those in ``NOT_CONVERTED``, each with its reason) every public callable
with parameters documents all of them; a numpydoc entry that three or more experiment modules write alike is
shared, written once in lagtheory.experiments.parameters, and a shared entry is used by three or more modules and
keyed by its parameter's name (fewer: written out where used); and every ``>>>`` example gives the output it
shows.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

from lagtheory.experiments.parameters import PARAMETERS, PLACEHOLDER, fill_doc

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lagtheory"
BOOK = ROOT / "book"

# A book label as the docstrings cite it: eq-*, or a statement's label (thm, lem, prop, def, cor, rem).
LABEL = re.compile(r"(?<![\w-])((?:eq|thm|lem|prop|def|cor|rem)-[a-z0-9]+(?:-[a-z0-9]+)*)(?![\w-])")
# Where the book defines labels: `:label: x` (math and sphinx-proof directives), `(x)=` targets,
# `:name: x` options and `$$ ... $$ (x)`.
DEFINITION = re.compile(r"^:label:\s*(\S+)|^\(([^)\s]+)\)=\s*$|^:name:\s*(\S+)|\$\$\s*\(([^)\s]+)\)\s*$", re.M)
GOOGLE_SECTION = re.compile(
    r"^\s*(Args|Arguments|Attributes|Returns|Raises|Yields|Examples?|Notes?|Keyword Args)(\s*\(.*\))?:\s*$", re.M
)
# Modules exempt from the check that every public callable documents every parameter, each with its reason;
# every other module of the package is checked, a new one from its first commit. None is exempt today.
NOT_CONVERTED: dict[str, str] = {}


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def _docstrings(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of every docstring of a module: module, class, function and attribute docstrings."""
    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, statement in enumerate(body):
            if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
                continue
            if not isinstance(statement.value.value, str):
                continue
            first = index == 0 and isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            after_assignment = index > 0 and isinstance(body[index - 1], ast.Assign | ast.AnnAssign)
            if first or after_assignment:
                found.append((statement.lineno, statement.value.value))
    return found


def _all_docstrings() -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(ROOT)), line, text)
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _docstrings(ast.parse(path.read_text(encoding="utf-8")))
    ]


def book_labels() -> set[str]:
    """Every label the book's sources define (the pages and the chapters' text forms)."""
    labels = set()
    for path in [*BOOK.glob("*.md"), *(BOOK / "text").glob("*.md")]:
        for match in DEFINITION.finditer(path.read_text(encoding="utf-8")):
            labels.add(next(group for group in match.groups() if group))
    return labels


def cited_labels(docstrings: list[tuple[str, int, str]]) -> dict[str, list[str]]:
    """Label -> the places (file:line) whose docstrings cite it."""
    cited: dict[str, list[str]] = {}
    for path, line, text in docstrings:
        for label in LABEL.findall(text):
            cited.setdefault(label, []).append(f"{path}:{line}")
    return cited


def test_every_label_cited_in_a_docstring_exists_in_the_book():
    labels = book_labels()
    cited = cited_labels(_all_docstrings())
    assert len(cited) >= 25, sorted(cited)  # the docstrings cite the book throughout
    missing = {label: places for label, places in cited.items() if label not in labels}
    assert not missing, f"labels cited in docstrings that the book does not define: {missing}"


def test_a_planted_wrong_label_is_found():
    planted = [("lagtheory/x.py", 1, "the bound of :eq:`eq-no-such-bound` and thm-threshold")]
    assert set(cited_labels(planted)) == {"eq-no-such-bound", "thm-threshold"}
    assert "thm-threshold" in book_labels() and "eq-no-such-bound" not in book_labels()


def test_no_google_style_sections():
    found = [
        f"{path}:{line}: {match.group(0).strip()}"
        for path, line, text in _all_docstrings()
        for match in GOOGLE_SECTION.finditer(text)
    ]
    assert not found, f"Google-style sections (write numpydoc sections: 'Parameters' over dashes): {found}"


def _section(text: str, title: str) -> list[str] | None:
    """The lines of a numpydoc section (title over dashes), None when the docstring has none."""
    lines = inspect.cleandoc(text).splitlines()
    for index in range(len(lines) - 1):
        if lines[index].strip() == title and re.fullmatch(r"\s*-{3,}\s*", lines[index + 1]):
            body = []
            for line in lines[index + 2 :]:
                if re.fullmatch(r"\s*\S.*", line) and index + 2 < len(lines) and _is_title(line, lines):
                    break
                body.append(line)
            return body
    return None


def _is_title(line: str, lines: list[str]) -> bool:
    position = lines.index(line)
    return position + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[position + 1]) is not None


def documented_parameters(text: str, title: str = "Parameters") -> list[str] | None:
    """The names a numpydoc Parameters section documents ('a, b : int' documents a and b)."""
    body = _section(text, title)
    if body is None:
        return None
    names = []
    for line in body:
        if line and not line[0].isspace():
            for name in line.split(" : ")[0].split(","):
                names.append(name.strip().lstrip("*"))
    return names


def _callables(module) -> list[tuple[str, object, object]]:
    """(qualified name, object, the function whose signature it documents) of a module's public callables."""
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            found.append((name, obj, obj))
        elif inspect.isclass(obj):
            # A typing.Protocol is not instantiated: its __init__ is typing's placeholder (*args, **kwargs).
            init = None if getattr(obj, "_is_protocol", False) else vars(obj).get("__init__")
            found.append((name, obj, init))
            for member_name, member in vars(obj).items():
                if not member_name.startswith("_") and inspect.isfunction(member):
                    found.append((f"{name}.{member_name}", member, member))
    return found


def _parameters(function) -> list[str]:
    if function is None:
        return []
    return [name for name in inspect.signature(function).parameters if name not in ("self", "cls")]


@pytest.mark.parametrize("module_name", [name for name in _module_names() if not name.endswith("__main__")])
def test_parameters_sections_name_real_parameters(module_name):
    module = importlib.import_module(module_name)
    wrong = []
    for name, obj, function in _callables(module):
        documented = documented_parameters(inspect.getdoc(obj) or "")
        if documented is None:
            continue
        unknown = set(documented) - set(_parameters(function))
        if unknown:
            wrong.append(f"{name}: {sorted(unknown)}")
    assert not wrong, f"Parameters sections naming no parameter of the callable: {wrong}"


@pytest.mark.parametrize(
    "module_name", [name for name in _module_names() if name not in NOT_CONVERTED and not name.endswith("__main__")]
)
def test_every_module_documents_every_parameter(module_name):
    module = importlib.import_module(module_name)
    undocumented = []
    for name, obj, function in _callables(module):
        parameters = _parameters(function)
        if not parameters:
            continue
        documented = documented_parameters(inspect.getdoc(obj) or "") or []
        if inspect.isclass(obj):  # a dataclass's fields may be documented as its Attributes
            documented += documented_parameters(inspect.getdoc(obj) or "", "Attributes") or []
        missing = [parameter for parameter in parameters if parameter not in documented]
        if missing:
            undocumented.append(f"{name}: {missing}")
    assert not undocumented, f"public callables without a numpydoc Parameters entry: {undocumented}"


def test_documented_parameters_reads_numpydoc():
    text = """Summary.

    Parameters
    ----------
    n, k : array_like
        Lengths and counts.
    scaling : {"log", "none"}, optional
        The scaling.

    Returns
    -------
    float
        The value.
    """
    assert documented_parameters(text) == ["n", "k", "scaling"]
    assert documented_parameters("Summary without sections.") is None


def test_docstring_examples_run():
    """Every ``>>>`` example of the package gives the output it shows (doctest, float64 reprs)."""
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    attempted = 0
    for module_name in _module_names():
        module = importlib.import_module(module_name)
        for test in finder.find(module, module_name):
            result = runner.run(test, out=lambda text: None)
            attempted += result.attempted
            assert result.failed == 0, f"{test.name}: {result.failed} of {result.attempted} examples fail"
    assert attempted >= 2, attempted


SHARED_LATER = {
    "lagtheory/experiments/confirmatory/stability.py": "the verdict's session edits it",
}
"""Experiment modules whose repeated entries are not yet shared, with the reason (being edited elsewhere)."""


def numpydoc_entries(text: str) -> list[str]:
    """The entries of a docstring's Parameters and Attributes sections, each as one whitespace-normalised line."""
    found = []
    for title in ("Parameters", "Attributes"):
        body = _section(text, title)
        entry: list[str] = []
        for line in body or []:
            if line and not line[0].isspace():
                if entry:
                    found.append(" ".join(" ".join(entry).split()))
                entry = [line]
            elif line.strip() and entry:
                entry.append(line)
        if entry:
            found.append(" ".join(" ".join(entry).split()))
    return found


SHARED_FROM = 3
"""An entry that this many modules write alike is shared (lagtheory.experiments.parameters); one that fewer modules
use is written out where it is used."""

TWO_MEANINGS = {
    "task_design": "``design`` is the registered transformer design (key ``design``) in seven modules and a "
    "TaskDesign in three: one word with two meanings, two entries",
}
"""Shared entries whose key is not their parameter's name, each with its reason."""


def repeated_entries(sources: dict[str, str], modules: int = SHARED_FROM) -> dict[str, list[str]]:
    """Entry -> the places (file: callable) that write it out, for entries written out in ``modules`` or more
    files."""
    places: dict[str, list[str]] = {}
    for path, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and (doc := ast.get_docstring(node)):
                for entry in numpydoc_entries(doc):
                    if not entry.startswith("%("):  # a shared entry, named
                        places.setdefault(entry, []).append(f"{path}: {node.name}")
    return {
        entry: where for entry, where in places.items() if len({place.split(": ")[0] for place in where}) >= modules
    }


def shared_entry_modules(sources: dict[str, str]) -> dict[str, set[str]]:
    """Key -> the files whose docstrings name the shared entry by a line ``%(key)s``."""
    found: dict[str, set[str]] = {}
    for path, source in sources.items():
        for key in PLACEHOLDER.findall(source):
            found.setdefault(key[1], set()).add(path)
    return found


def test_no_parameter_entry_of_the_experiments_is_written_out_in_three_modules():
    """A numpydoc entry (name, type, description) that three or more modules write alike is written once, in
    lagtheory.experiments.parameters.PARAMETERS, and named by ``%(key)s``."""
    sources = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted((PACKAGE / "experiments").rglob("*.py"))
        if str(path.relative_to(ROOT)) not in SHARED_LATER
    }
    repeated = repeated_entries(sources)
    assert not repeated, f"entries written out in {SHARED_FROM}+ modules (share them in parameters.py): {repeated}"


def test_every_shared_entry_is_used_by_three_modules_and_keyed_by_its_parameter():
    """A shared entry is named in three or more modules (fewer: written out where used) and its key is the name
    it documents, but for the keys of ``TWO_MEANINGS``."""
    sources = {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}
    used = shared_entry_modules(sources)
    few = {key: sorted(used.get(key, ())) for key in PARAMETERS if len(used.get(key, ())) < SHARED_FROM}
    assert not few, f"shared entries used by fewer than {SHARED_FROM} modules (write them out where used): {few}"
    misnamed = {
        key: header
        for key, (header, _) in PARAMETERS.items()
        if header.split(" : ")[0] != key and key not in TWO_MEANINGS
    }
    assert not misnamed, f"shared entries not keyed by their parameter's name: {misnamed}"
    for key in TWO_MEANINGS:
        assert key in PARAMETERS, f"{key} is no longer a shared entry: drop it from TWO_MEANINGS"


def test_a_planted_repeated_entry_is_found_and_a_shared_one_is_filled():
    planted = '''
def f(record):
    """F.

    Parameters
    ----------
    record : mapping
        A study record.
    """


def g(record):
    """G.

    Parameters
    ----------
    record : mapping
        A study record.
    """
'''
    assert repeated_entries({"x.py": planted, "y.py": planted}) == {}  # two modules: written out where used
    assert repeated_entries({"x.py": planted, "y.py": planted, "z.py": planted}) == {
        "record : mapping A study record.": ["x.py: f", "x.py: g", "y.py: f", "y.py: g", "z.py: f", "z.py: g"]
    }
    named = 'def h(seeds):\n    """H.\n\n    Parameters\n    ----------\n    %(seeds)s\n    """\n'
    assert shared_entry_modules({"x.py": named, "y.py": named, "z.py": planted}) == {"seeds": {"x.py", "y.py"}}

    @fill_doc
    def shared(record, seeds):
        """S.

        Parameters
        ----------
        %(record)s
        %(seeds)s
        """

    assert documented_parameters(inspect.getdoc(shared)) == ["record", "seeds"]
    assert inspect.getdoc(shared).endswith("seeds : sequence of int\n    The seeds.")

    def misspelt():
        """M.

        Parameters
        ----------
        %(no_such_entry)s
        """

    with pytest.raises(KeyError, match="no_such_entry"):
        fill_doc(misspelt)
    with pytest.raises(ValueError, match="names no shared entry"):
        fill_doc(test_documented_parameters_reads_numpydoc)
