"""The fault policy on its own: the fallback move and the forfeit threshold."""

from __future__ import annotations

import pytest

from games.engine import Move
from games.faults import Fault, FaultKind, fallback_move, forfeits


def moves(*texts: str) -> list[Move]:
    return [Move.from_str(text) for text in texts]


@pytest.mark.parametrize(
    "legal, expected",
    [
        (moves("7o:3c+5e", "4b", "2c", "10o"), "2c"),
        (moves("2e", "2o"), "2o"),
        (moves("10b", "1e"), "1e"),
        (moves("7o:3c+5e", "7o:8b"), "7o:3c+5e"),
    ],
)
def test_fallback_trails_the_lowest_card_else_takes_the_first_capture(legal, expected):
    assert fallback_move(legal) == Move.from_str(expected)


def test_fallback_needs_a_legal_move():
    with pytest.raises(ValueError):
        fallback_move([])


@pytest.mark.parametrize(
    "count, max_faults, forfeit",
    [
        (0, 0, False),
        (1, 0, True),
        (5, 5, False),
        (6, 5, True),
    ],
)
def test_a_seat_forfeits_on_fault_number_max_plus_one(count, max_faults, forfeit):
    assert forfeits(count, max_faults) is forfeit


def test_fault_message_and_dict():
    fault = Fault(FaultKind.CONNECT, "connection refused")
    assert fault.message == "The bot is unreachable: connection refused"
    assert fault.to_dict() == {"kind": "connect", "detail": "connection refused"}
