"""The suite's own ordering under xdist (tests/tiers.py): the longest modules first, each module's
tests together and in their order, and every module it names still there."""

from pathlib import Path

from tests.tiers import LONGEST, SLOW, longest_first

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
