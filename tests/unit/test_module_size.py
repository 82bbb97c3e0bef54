"""Modules stay small (docs/style.md, habit 4): none over 300 lines, except those still waiting for their split."""

from __future__ import annotations

from tests.paths import REPO

LIMIT = 300
#: modules over the limit today, each to be split by its owner (issue 24 item 4); remove a line once it is
WAITING = {"fsbench/api/tools.py", "fsbench/report/rows.py"}


def test_no_new_module_grows_past_the_limit():
    over = {}
    for path in sorted((REPO / "fsbench").rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        rel = path.relative_to(REPO).as_posix()
        if lines > LIMIT and rel not in WAITING:
            over[rel] = lines
    assert not over, (f"modules over {LIMIT} lines: {over}; split each by concern into modules whose names say "
                      "what they hold (docs/style.md)")
