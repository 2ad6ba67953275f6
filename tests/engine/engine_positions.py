"""Building exact game positions for scenario tests (the engine has no public setter)."""

from __future__ import annotations

from games.engine import Card, Game, Ruleset
from games.engine.cards import VALUE_KEYS


def cards(text: str) -> list[Card]:
    """``"1e 3c 4b"`` -> the cards."""
    return [Card.from_str(part) for part in text.split()]


def position(
    ruleset: Ruleset,
    hands: list[str],
    table: str,
    turn: int = 0,
    *,
    deck_left: bool = False,
) -> Game:
    """A game whose current round has exactly these hands and table, ``turn`` to play.

    With ``deck_left`` false the deck is used up, so the round ends when the hands are empty.
    """
    game = Game.new(ruleset, seed=1)
    game._hands = [sorted(c.index for c in cards(hand)) for hand in hands]
    game._table = sorted(c.index for c in cards(table))
    game._table_key = sum(VALUE_KEYS[c] for c in game._table)
    game._turn = turn
    game._table_mask = sum(1 << c for c in game._table)
    game._escobas = [0] * ruleset.players
    game._captured = [0] * ruleset.num_teams
    game._seat_captured = [0] * ruleset.players
    game._last_capturer = -1
    if not deck_left:
        game._deck_position = 40
    return game


def classic(**options: object) -> Ruleset:
    return Ruleset.from_preset("classic", options)
