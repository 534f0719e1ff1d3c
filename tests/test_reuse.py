"""What a reader needs to reuse and cite the book (LICENSE, CITATION.cff, CHANGELOG.md, "How to cite").

The version is written once, in pyproject.toml: the package's ``__version__`` (read from the installed
metadata), CITATION.cff and the changelog's latest release must all say the same, and no module of the
package may write a version literal of its own. The "How to cite" sections (README, reproducibility page)
and CITATION.cff must quote exactly the registered studies' hashes as book/data/registration*.sha256 store
them, and the registration page must show the same. The licence files must be whole (every section of
CC BY 4.0, the three clauses of BSD-3-Clause) and name the files each covers.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import yaml

import lagtheory

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
HASH = re.compile(r"\b[0-9a-f]{64}\b")
# The registered studies' hashes as the data files store them (one file per registered section).
STORED_HASHES = {
    path.name: path.read_text(encoding="utf-8").strip()
    for path in sorted((ROOT / "book/data").glob("registration*.sha256"))
}


def section(text: str, heading: str) -> str:
    """The Markdown section under ``heading`` (a ``## `` line), up to the next heading of that level."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_the_version_is_written_once_and_everyone_quotes_it():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert lagtheory.__version__ == VERSION
    assert citation()["version"] == VERSION
    releases = re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M
    )
    assert releases, "CHANGELOG.md names no release"
    assert releases[0][0] == VERSION, "the changelog's latest release is not the package's version"
    assert str(citation()["date-released"]) == releases[0][1]
    literal = re.compile(r"""["']\d+\.\d+\.\d+["']""")
    for path in sorted((ROOT / "lagtheory").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            assert not ("version" in line.lower() and literal.search(line)), f"{path.name} writes a version: {line}"


def test_citation_file_is_valid_cff():
    data = citation()
    # The keys CFF 1.2.0 requires, with the types its schema gives them.
    assert data["cff-version"] == "1.2.0"
    assert isinstance(data["message"], str) and data["message"].strip()
    assert isinstance(data["title"], str) and data["title"].strip()
    assert isinstance(data["authors"], list) and data["authors"]
    for author in data["authors"]:
        assert set(author) & {"name", "family-names"}, author
    assert data["type"] in {"software", "dataset"}
    assert isinstance(data["version"], str)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(data["date-released"]))
    assert set(data["license"]) == {"BSD-3-Clause", "CC-BY-4.0"}
    for identifier in data["identifiers"]:
        assert identifier["type"] in {"doi", "url", "swh", "other"} and identifier["description"]


def test_the_quoted_hashes_are_the_registered_ones():
    stored = set(STORED_HASHES.values())
    assert len(stored) == len(STORED_HASHES) >= 2 and all(HASH.fullmatch(value) for value in stored)
    quoted = {
        "README": section((ROOT / "README.md").read_text(encoding="utf-8"), "How to cite, and reuse"),
        "reproducibility page": section((ROOT / "book/reproducibility.md").read_text(encoding="utf-8"), "How to cite"),
        "CITATION.cff": " ".join(item["value"] for item in citation()["identifiers"]),
    }
    for where, text in quoted.items():
        assert set(HASH.findall(text)) == stored, f"{where} quotes other hashes than book/data/registration*.sha256"
        for name in STORED_HASHES:
            assert where == "CITATION.cff" or name in text, f"{where} does not name book/data/{name}"
    # Each "How to cite" pairs each hash with its file (the file's name on the same line or the next).
    for where in ("README", "reproducibility page"):
        lines = quoted[where].splitlines()
        for name, value in STORED_HASHES.items():
            at = [i for i, line in enumerate(lines) if value in line]
            assert at and any(name in "\n".join(lines[i : i + 2]) for i in at), f"{where}: {name} not beside its hash"
    page = (ROOT / "book/registration.md").read_text(encoding="utf-8")
    assert stored <= set(HASH.findall(page))
    for where in ("README", "reproducibility page"):
        assert f"version {VERSION}" in quoted[where]


def test_licences_are_whole_and_say_what_they_cover():
    cc = (ROOT / "LICENSE-CC-BY-4.0").read_text(encoding="utf-8")
    assert cc.startswith("Attribution 4.0 International")
    assert "Creative Commons Attribution 4.0 International Public License" in cc
    for number in range(1, 9):
        assert re.search(rf"^Section {number} -- ", cc, flags=re.M), f"CC BY 4.0 lacks Section {number}"
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "BSD 3-Clause License" in licence and "LICENSE-CC-BY-4.0" in licence
    for clause in ("1. Redistributions of source code", "2. Redistributions in binary form", "3. Neither the name"):
        assert clause in licence
    for path in (
        "lagtheory/",
        "tests/",
        "book/_ext/",
        "book/text/*.md",
        "book/*.ipynb",
        "book/data/",
        "book/_static/vendor/",
    ):
        assert path in licence, f"LICENSE does not say which licence covers {path}"
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_the_install_size_stated_is_the_environments():
    """The install size the README and the lab state, against the environment the tests run in: its disk
    usage as ``du -sh`` prints it (blocks, in units of 2**30 bytes), within 8% (1.4 where it is 1.57 fails).
    """
    usage = sum(path.lstat().st_blocks * 512 for path in Path(sys.prefix).rglob("*")) / 2**30
    for page, pattern in (
        ("README.md", r"installing takes [^(]*?\band ([\d.]+) GB of disk"),
        ("book/lab.md", r"Install the book as the README says \(a few minutes, and ([\d.]+) GB of disk\)"),
    ):
        stated = re.search(pattern, (ROOT / page).read_text(encoding="utf-8"))
        assert stated, f"{page} no longer states the install size where this test reads it"
        assert abs(usage - float(stated.group(1))) <= 0.08 * usage, f"{page}: the environment takes {usage:.2f} GB"
