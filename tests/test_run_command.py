"""The experiment command (python -m lagtheory.experiments.run) outside a checkout."""

import pytest

from lagtheory.experiments import run


def test_without_book_data_the_command_asks_for_an_output_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # as from an installed wheel: no book/data here
    with pytest.raises(SystemExit) as stop:
        run.main(["icl", "--quiet"])
    assert stop.value.code == 2
    assert "--output: no folder book/data in the working directory" in capsys.readouterr().err
