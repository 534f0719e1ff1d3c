"""Every mutation of tests/mutation_catalogue.py still applies: its text occurs exactly once in the
file it mutates (a refactor that moves a formula must move its mutation with it; the catalogue itself
is run by hand, not by CI)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_catalogue():
    spec = importlib.util.spec_from_file_location("mutation_catalogue", ROOT / "tests" / "mutation_catalogue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


MUTATIONS = load_catalogue().MUTATIONS


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_mutated_text_occurs_once(mutation) -> None:
    source = (ROOT / mutation.path).read_text()
    assert source.count(mutation.old) == 1, f"{mutation.name}: {mutation.old!r} in {mutation.path}"
    assert mutation.new != mutation.old
