"""The reference list is labelled as the chapters cite, and every entry stands on a checked record.

A small Sphinx project cites every entry of book/references.bib with the book's settings (the reference
and list styles read from _config.yml, the list style from book/_ext/bibliography_style.py) and is built;
each citation's printed text must be its entry's label in the list ("[Hahn, 2020]" in the text,
"[Hahn, 2020]" before the entry), no label may be a number, and no entry may call itself unverified.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import yaml
from pybtex.database import parse_file
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
sys.path.insert(0, str(ROOT / "book" / "_ext"))


def build(tmp_path: Path) -> str:
    keys = sorted(parse_file(str(BIB)).entries)
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text("")
    lines = ["Citations", "=========", ""] + [f"{key}: :cite:p:`{key}`" for key in keys] + ["", ".. bibliography::", ""]
    (source / "index.rst").write_text("\n\n".join(lines))
    app = Sphinx(
        str(source),
        str(source),
        str(tmp_path / "out"),
        str(tmp_path / "doctrees"),
        "html",
        warningiserror=True,
        status=None,
        confoverrides={
            "extensions": ["sphinxcontrib.bibtex", "bibliography_style"],
            "bibtex_bibfiles": [str(BIB)],
            "bibtex_reference_style": CONFIG["bibtex_reference_style"],
            "bibtex_default_style": CONFIG["bibtex_default_style"],
        },
    )
    app.build()
    return (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def test_each_citation_prints_its_entrys_label(tmp_path):
    page = build(tmp_path)
    labels = {
        anchor: text(label)
        for anchor, label in re.findall(
            r'<div class="citation" id="([^"]+)"[^>]*>\s*<span class="label">(.*?)</span>\s*</span>', page, flags=re.S
        )
    }
    keys = sorted(parse_file(str(BIB)).entries)
    assert len(labels) == len(keys), labels
    for key in keys:
        cited = re.search(rf"<p>{key}: (.*?)</p>", page, flags=re.S)
        assert cited, key
        target = re.search(r'href="#([^"]+)"', cited.group(1)).group(1)
        printed = text(cited.group(1))
        assert printed == labels[target], (key, printed, labels[target])
        assert not re.fullmatch(r"\[\d+\]", labels[target]), labels[target]
        assert re.fullmatch(r"\[.+, \d{4}[a-z]?\]", labels[target]), labels[target]


def test_no_entry_is_unverified():
    source = BIB.read_text(encoding="utf-8")
    assert "unverified" not in source.lower()
    for key, entry in parse_file(str(BIB)).entries.items():
        assert "note" not in entry.fields or "verif" not in entry.fields["note"].lower(), key
        assert "Anonymous" not in " ".join(str(p) for p in entry.persons.get("author", [])), key
