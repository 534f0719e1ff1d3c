"""The configuration copy that .ci/run builds the book from (tests/stored_outputs_config.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from stored_outputs_config import stored_outputs_config

ROOT = Path(__file__).resolve().parents[1]


def test_the_copy_turns_execution_off_and_changes_nothing_else():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    assert config["execute"]["execute_notebooks"] == "force"  # the reader's build executes everything
    copy = stored_outputs_config(config)
    assert copy["execute"]["execute_notebooks"] == "off"
    copy["execute"]["execute_notebooks"] = "force"
    assert copy == config
    assert config["execute"]["execute_notebooks"] == "force"  # the original is not modified


def test_a_config_without_the_setting_is_refused():
    with pytest.raises(ValueError, match="execute_notebooks"):
        stored_outputs_config({"title": "x"})


def test_the_command_writes_beside_the_source_only(tmp_path):
    source = tmp_path / "_config.yml"
    source.write_text("execute:\n  execute_notebooks: force\n  timeout: 600\n", encoding="utf8")
    target = tmp_path / "_config_copy.yml"
    script = str(ROOT / "tests" / "stored_outputs_config.py")
    subprocess.run([sys.executable, script, str(source), str(target)], check=True, capture_output=True)
    assert yaml.safe_load(target.read_text(encoding="utf8")) == {
        "execute": {"execute_notebooks": "off", "timeout": 600}
    }
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    refused = subprocess.run(
        [sys.executable, script, str(source), str(elsewhere / "c.yml")], capture_output=True, text=True
    )
    assert refused.returncode != 0 and "beside" in refused.stderr
