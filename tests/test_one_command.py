"""One command: ``python -m lagtheory.experiments.run`` is the only runnable module of the package besides the
module commands the book quotes, each a declared alias (lagtheory.experiments.run.ALIASES) whose script block
only calls ``alias`` with its own name; only the command builds an option parser; every subcommand's options are
checked by the one parser (an option a subcommand does not take is refused, naming it); and an alias runs the
same code as the subcommand."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_graph import is_main_block  # benchmarks/import_graph.py (pytest.ini's pythonpath)

from lagtheory.experiments import run
from lagtheory.experiments.paths import TRANSFORMER_DESIGN
from lagtheory.experiments.subcommands import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "lagtheory.experiments.run"


def sources() -> dict[str, str]:
    """Every module of the package by dotted name -> its source."""
    found = {}
    for path in sorted((ROOT / "lagtheory").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text(encoding="utf-8")
    return found


def runnable(modules: dict[str, str]) -> dict[str, str]:
    """Module -> what makes it runnable or a command of its own: a script block, or an option parser built."""
    found = {}
    for name, text in modules.items():
        tree = ast.parse(text)
        if any(is_main_block(node) for node in tree.body):
            found[name] = "if __name__ == '__main__'"
        elif any(isinstance(node, ast.Attribute) and node.attr == "ArgumentParser" for node in ast.walk(tree)):
            found[name] = "argparse.ArgumentParser"
    return found


def not_an_alias(modules: dict[str, str]) -> list[str]:
    """The runnable modules that are neither the command nor a declared alias whose script block is exactly
    ``from lagtheory.experiments.run import alias`` and ``alias("<its own name>")``; and the modules besides the
    command that build a parser."""
    wrong = []
    for name, why in runnable(modules).items():
        if name == COMMAND:
            continue
        if name not in run.ALIASES or why != "if __name__ == '__main__'":
            wrong.append(f"{name} ({why})")
            continue
        block = next(node for node in ast.parse(modules[name]).body if is_main_block(node))
        expected = ast.parse(f'from {COMMAND} import alias\nalias("{name}")').body
        if [ast.dump(node) for node in block.body] != [ast.dump(node) for node in expected]:
            wrong.append(f"{name} (its script block does more than call alias({name!r}))")
    return wrong


def test_one_runnable_module_besides_the_declared_aliases():
    modules = sources()
    assert not not_an_alias(modules)
    assert set(runnable(modules)) == {COMMAND, *run.ALIASES}
    assert {study for study, _ in run.ALIASES.values()} <= set(SUBCOMMANDS)


def test_a_planted_command_and_a_thick_alias_are_found():
    modules = sources()
    modules["lagtheory.experiments.exploratory.newstudy"] = 'if __name__ == "__main__":\n    print(1)\n'
    modules["lagtheory.experiments.exploratory.parsed"] = "import argparse\nparse = argparse.ArgumentParser()\n"
    alias = "lagtheory.experiments.exploratory.reanalysis"
    modules[alias] += "\nif __name__ == '__main__':\n    main()\n"
    modules[alias] = modules[alias].replace(
        f'    alias("{alias}")', '    alias("lagtheory.experiments.predictor.evaluation")'
    )
    assert not_an_alias(modules) == [
        f"{alias} (its script block does more than call alias({alias!r}))",
        "lagtheory.experiments.exploratory.newstudy (if __name__ == '__main__')",
        "lagtheory.experiments.exploratory.parsed (argparse.ArgumentParser)",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["lag-timing", "--workers", "3"], "--workers does not apply to lag-timing"),
        (["transformer-registered", "--part", "run", "--workers", "0"], "--workers must be at least 1"),
        (["transformer-pilot", "--workers", "0", "--stage", "tuning"], "--workers must be at least 1"),
        (["transformer-pilot"], "--stage is required by transformer-pilot"),
        (["transformer-pilot", "--stage", "grid"], "--stage of transformer-pilot must be one of"),
        (["confirmatory", "--stage", "tuning", "--finished-only"], "--finished-only does not apply to confirmatory"),
        (["regression", "--stage", "grid"], "--stage applies to the confirmatory study only"),
        (["transformer-registered"], "--part is required by transformer-registered"),
        (["transformer-registered", "--part", "run", "--record", "x"], "--record takes at most 1"),
        (["confirmatory-analysis"], "--record is required by confirmatory-analysis"),
        (["answer", "--output", "x"], "--output does not apply to answer (it takes no options)"),
        (["successor", "--design", "x"], "--design does not apply to successor"),
    ],
)
def test_each_subcommand_s_options_are_checked_by_the_one_parser(arguments, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        run.main(arguments)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_the_registered_alias_runs_the_same_code_and_refuses_to_overwrite(tmp_path, capsys):
    """The registered section's module command writes, through the one command, the design the registered
    file holds, byte for byte; a second run refuses to replace it without --overwrite."""
    output = tmp_path / "design.json"
    assert run.alias("lagtheory.experiments.confirmatory.transformer", ["design", "--output", str(output)]) == output
    assert output.read_bytes() == (ROOT / TRANSFORMER_DESIGN).read_bytes()
    with pytest.raises(SystemExit):
        run.alias("lagtheory.experiments.confirmatory.transformer", ["design", "--output", str(output)])
    assert "exists; pass --overwrite" in capsys.readouterr().err
