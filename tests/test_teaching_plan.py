"""The teaching page's course plan covers every chapter and the lab, and its commands fit their boxes.

Every numbered chapter of _toc.yml (and the lab) must be linked from a row of the plan's table on
book/teaching.md; a chapter missing from it is a chapter a teacher following the plan never reaches. The
commands the teaching page and the lab give in code blocks keep each line within what the box shows at
1400 px without scrolling (the teaching page's one-line install command, 119 characters, ran 253 px past
its box there: about 89 characters fit).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
FIT = 88
"""Characters of a code line that show in a code box at 1400 px."""


def plan_rows() -> list[str]:
    text = (BOOK / "teaching.md").read_text(encoding="utf-8")
    plan = text[text.index("## A course plan") :]
    plan = plan[: plan.index("\n## ", 1)]
    return [line for line in plan.splitlines() if re.match(r"\| \d+ \|", line)]


def test_the_plan_covers_every_chapter_and_the_lab():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = [Path(c["file"]).name for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
    linked = {name for row in plan_rows() for name in re.findall(r"\]\((\w+)\.(?:ipynb|md)\)", row)}
    assert len(chapters) >= 13
    missing = [name for name in [*chapters, "lab"] if name not in linked]
    assert not missing, f"the course plan leaves out {missing}"
    sessions = [int(re.match(r"\| (\d+) \|", row).group(1)) for row in plan_rows()]
    assert sessions == list(range(1, len(sessions) + 1))
    heading = re.search(r"^## A course plan: (\w+) sessions", (BOOK / "teaching.md").read_text(), flags=re.M)
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
    assert heading and words.index(heading.group(1)) + 1 == len(sessions)


@pytest.mark.parametrize("page", ["teaching.md", "lab.md"])
def test_code_lines_fit_their_box(page):
    text = (BOOK / page).read_text(encoding="utf-8")
    for block in re.findall(r"^```(?:bash|python)\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.splitlines():
            assert len(line) <= FIT, f"{page}: {len(line)} characters: {line}"
