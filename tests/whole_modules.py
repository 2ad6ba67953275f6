"""Which test files a run's `-m` leaves out as a whole, so that they are not even imported.

`tests/tiers.py` marks every test of some modules and directories (a `SLOW` key without `::`,
tests/browser). When the run's mark expression selects no test that carries such a mark,
whatever other marks it has, importing those modules only costs time: `make test-fast` would
import Playwright, Schemathesis and the league fixtures in every xdist worker to deselect them.
`tests/conftest.py` asks `left_out` from `pytest_ignore_collect`.
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from pathlib import Path

from tests.tiers import SLOW

# The mark every test under a path carries (tests/tiers.py `mark_tiers`).
WHOLE: dict[str, str] = {key: "slow" for key in SLOW if "::" not in key} | {
    "tests/browser/": "browser"
}
NOT_MARKS = frozenset({"and", "or", "not", "True", "False"})


@cache
def never_selects(markexpr: str, mark: str) -> bool:
    """Whether `-m markexpr` selects no test marked `mark`, for every other mark it may carry.

    Every other name in the expression is tried present and absent (a mark asked for with
    arguments, `foo(x=1)`, as well), so the answer holds for any test; an expression pytest
    cannot compile here leaves everything to pytest's own selection (False).
    """
    try:
        from _pytest.mark.expression import Expression

        expression = Expression.compile(markexpr)
    except (ImportError, SyntaxError):
        return False
    others = sorted(set(re.findall(r"[A-Za-z_]\w*", markexpr)) - NOT_MARKS - {mark})
    for count in range(len(others) + 1):
        for chosen in itertools.combinations(others, count):
            if expression.evaluate(_marked({mark, *chosen})):
                return False
    return True


def _marked(present: set[str]):
    """A matcher for a test carrying exactly the marks `present` (with any arguments)."""
    return lambda name, /, **arguments: name in present


def left_out(path: Path, root: Path, markexpr: str) -> bool:
    """Whether every test under `path` (a file or directory) is deselected by `markexpr`."""
    if not markexpr or not path.is_relative_to(root):
        return False
    relative = path.relative_to(root).as_posix() + ("/" if path.is_dir() else "")
    return any(
        relative.startswith(key) and never_selects(markexpr, mark) for key, mark in WHOLE.items()
    )
