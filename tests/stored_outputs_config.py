"""Write a copy of the book's configuration that renders the notebooks' stored outputs.

``.ci/run`` builds the book from the outputs that nbval verifies in the same run, so that each
notebook executes twice in CI (nbval on both floating-point paths) rather than three times. The copy
differs from ``_config.yml`` only in ``execute.execute_notebooks: "off"``; it must sit in the
repository root, because Jupyter Book resolves ``local_extensions`` relative to the config file.

Usage: ``python tests/stored_outputs_config.py _config.yml _config_stored_outputs.yml``
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml


def stored_outputs_config(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration ``config`` with notebook execution off and nothing else changed."""
    execute = config.get("execute")
    if not isinstance(execute, dict) or "execute_notebooks" not in execute:
        raise ValueError("config: no execute.execute_notebooks setting to turn off")
    return {**config, "execute": {**execute, "execute_notebooks": "off"}}


def main(argv: list[str]) -> None:
    """Read the configuration ``argv[0]`` and write its stored-outputs copy to ``argv[1]``."""
    if len(argv) != 2:
        raise SystemExit("usage: stored_outputs_config.py SOURCE TARGET")
    source, target = (Path(name) for name in argv)
    if target.resolve().parent != source.resolve().parent:
        raise SystemExit(f"target {target}: must sit beside {source} (local_extensions are relative to it)")
    config = yaml.safe_load(source.read_text(encoding="utf8"))
    text = yaml.safe_dump(stored_outputs_config(config), sort_keys=False, allow_unicode=True)
    target.write_text(f"# Written by tests/stored_outputs_config.py from {source.name}; do not edit.\n{text}", "utf8")
    print(f"{target}: {source.name} with execute_notebooks off")


if __name__ == "__main__":
    main(sys.argv[1:])
