"""The fault policy, one copy for the arena's runner and the SDK's local league.

A fault is anything a bot does wrong on a move: no answer in time, an error, a reply that is not
a move, an illegal move. The policy:

- a faulting move is replaced by a fallback legal move: trail the lowest card when trailing is
  legal, otherwise the first legal capture in the engine's order;
- a seat with more than `max_faults` faults in one game forfeits that game.
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import Move

DEFAULT_MAX_FAULTS = 5


def fallback_move(legal_moves: Sequence[Move]) -> Move:
    """The move played for a seat whose own move faulted.

    Deterministic and cheap, so a faulting bot gains nothing from it: the lowest card is trailed
    when any trail is legal, otherwise the first legal capture is taken.
    """
    if not legal_moves:
        raise ValueError("no legal moves: it is not this seat's turn")
    trails = [move for move in legal_moves if not move.capture]
    if trails:
        return min(trails, key=lambda move: move.card)
    return legal_moves[0]


def forfeits(fault_count: int, max_faults: int) -> bool:
    """A seat forfeits on its fault number `max_faults + 1`."""
    return fault_count > max_faults
