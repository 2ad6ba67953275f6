"""The suite's own ordering under xdist (tests/tiers.py): the longest modules first, each module's
tests together and in their order, and every module it names still there."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiers import LONGEST, SLOW, longest_first
from tests.whole_modules import left_out, never_selects

ROOT = Path(__file__).resolve().parents[2]


class Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_the_longest_modules_go_first_and_each_module_stays_whole_and_in_order():
    longest, second = sorted(LONGEST, key=LONGEST.get, reverse=True)[:2]
    collected = [
        "tests/a/test_short.py::test_one",
        f"{second}::test_x",
        "tests/a/test_short.py::test_two",
        f"{longest}::test_y",
        f"{longest}::test_z",
        "tests/b/test_other.py::test_three",
    ]
    items = [Item(nodeid) for nodeid in collected]
    longest_first(items)
    assert [item.nodeid for item in items] == [
        f"{longest}::test_y",
        f"{longest}::test_z",
        f"{second}::test_x",
        "tests/a/test_short.py::test_one",
        "tests/a/test_short.py::test_two",
        "tests/b/test_other.py::test_three",
    ]


def test_every_module_the_tiers_name_exists():
    """A module renamed or split must be renamed here too, or it silently loses its place."""
    missing = [path for path in LONGEST if not (ROOT / path).is_file()]
    missing += [key for key in SLOW if not (ROOT / key.split("::", 1)[0]).exists()]
    assert missing == []


def test_make_test_fast_leaves_out_what_the_tiers_mark():
    """The marks `mark_tiers` adds must exist when pytest's own `-m` selects: a browser test, a
    slow one and a module's integration test are left out; the rest of their modules stays."""
    makefile = (ROOT / "Makefile").read_text()
    fast = re.search(r"^FAST_TESTS := (.+)$", makefile, re.MULTILINE).group(1)
    modules = [
        "tests/browser/test_pages.py",  # browser
        "tests/engine/test_engine_cli.py",  # one slow test (SLOW), the others fast
        "tests/foundation/test_tiers.py",  # this test (SLOW) and fast ones
    ]

    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", fast, *modules],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert collected.returncode == 0, collected.stdout + collected.stderr
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert not [i for i in ids if i.startswith("tests/browser/")]
    assert not [i for i in ids if "test_module_entry_point" in i or "test_make_test_fast" in i]
    assert "tests/foundation/test_tiers.py::test_every_module_the_tiers_name_exists" in ids
    assert any(i.startswith("tests/engine/test_engine_cli.py::") for i in ids)


@pytest.mark.parametrize(
    ("markexpr", "slow_never", "browser_never"),
    [
        ("not integration and not browser and not postgres and not slow", True, True),
        ("not slow", True, False),
        ("slow", False, False),
        ("not slow or integration", False, False),  # a slow integration test is selected
        ("not (slow and integration)", False, False),
        ("not browser", False, True),
    ],
)
def test_a_mark_is_never_selected_only_when_no_other_mark_can_select_it(
    markexpr, slow_never, browser_never
):
    assert never_selects(markexpr, "slow") is slow_never
    assert never_selects(markexpr, "browser") is browser_never


def test_only_paths_whose_every_test_is_left_out_are_not_imported():
    fast = "not integration and not browser and not postgres and not slow"
    whole_module = next(key for key in SLOW if "::" not in key and key.endswith(".py"))
    one_slow_test = next(key for key in SLOW if "::" in key).split("::")[0]

    assert left_out(ROOT / whole_module, ROOT, fast)
    assert left_out(ROOT / "tests/browser", ROOT, fast)
    assert left_out(ROOT / "tests/browser/test_pages.py", ROOT, fast)
    assert not left_out(ROOT / one_slow_test, ROOT, fast)  # its other tests are fast
    assert not left_out(ROOT / "tests", ROOT, fast)
    assert not left_out(ROOT / "tests/engine", ROOT, fast)
    assert not left_out(ROOT / whole_module, ROOT, "")  # no -m: everything runs
    assert not left_out(ROOT / whole_module, ROOT, "slow")
