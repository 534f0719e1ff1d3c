"""Every mutation of tests/mutation_catalogue.py still applies: its text occurs exactly once in the
file it mutates (a refactor that moves a formula must move its mutation with it; the catalogue itself
is run by hand, not by CI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mutation_catalogue import MUTATIONS  # tests/mutation_catalogue.py (pytest.ini's pythonpath)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_mutated_text_occurs_once(mutation) -> None:
    source = (ROOT / mutation.path).read_text()
    assert source.count(mutation.old) == 1, f"{mutation.name}: {mutation.old!r} in {mutation.path}"
    assert mutation.new != mutation.old
