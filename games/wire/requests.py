"""What the arena sends to bots: move requests, start and end notices, and the info reply shape.

Everything in a move request comes from the seat's own `GameView`, so a body cannot leak another
seat's hand. Nothing in a body links the game to another one: `game.match_id` is the game's own
id (the field stays, so `escoba/1` bots that read it still parse), never its set's, and a game
played anonymously names its seats `seat 0`, `seat 1`... (`anonymous_seat_names`) in every body,
its end notice included (the names are public once its set is over). A bot keeps whatever it is
sent: a set id would tell it which other game was dealt the same cards, and an opponent's name
whom to dodge or to feed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..engine import ALL_CARDS, Card, GameView, LuckyDeal, Move, Play, Result, Ruleset
from .schemas import PROTOCOL

# Card names by card: cards are interned, so this is a lookup by identity, done in C by `map`.
_NAMES: dict[Card, str] = {card: str(card) for card in ALL_CARDS}


def _cards(cards: Sequence[Card]) -> list[str]:
    return list(map(_NAMES.__getitem__, cards))


def game_block(ruleset: Ruleset, game_id: str | int, timeout_ms: int) -> dict[str, Any]:
    """The `game` object of a game's bodies: the same for all of them, so a caller sending many
    move requests makes it once (`move_request(..., game=...)`) and reads it, never changes it."""
    return {
        "id": str(game_id),
        # escoba/1 has always carried the set's id here; it is now the game's own id, so that no
        # two games a bot plays can be linked through it.
        "match_id": str(game_id),
        "ruleset": ruleset.to_dict(),
        "timeout_ms": int(timeout_ms),
    }


def anonymous_seat_names(players: int) -> list[str]:
    """The seats' names in an anonymous game's start notice and move requests: `seat 0`,
    `seat 1`, ... (the bot's own seat too, so that no name tells one game from another)."""
    return [f"seat {seat}" for seat in range(players)]


def wire_play(play: Play) -> dict[str, Any]:
    """One play of the round's history as the move request carries it."""
    return {
        "seat": play.seat,
        "card": _NAMES[play.card],
        "capture": _cards(play.capture),
        "escoba": bool(play.escoba),
    }


def wire_lucky_deal(lucky_deal: LuckyDeal | None) -> dict[str, Any] | None:
    """The round's lucky deal as the move request (and `escoba-log/1`) carries it, or None."""
    if lucky_deal is None:
        return None
    return {
        "seat": lucky_deal.seat,
        "cards": _cards(lucky_deal.cards),
        "escobas": lucky_deal.escobas,
    }


class WireHistory:
    """The wire form of one game's current round, for a caller sending many move requests.

    A round's history only grows, so each play is encoded once, when it first appears, instead
    of once for every later move of the round (a two-player round has 36 plays). Use one per
    game: `move_request(view, ..., history=wire_history.of(view))`.
    """

    def __init__(self) -> None:
        self._round = 0
        self._plays: list[dict[str, Any]] = []

    def of(self, view: GameView) -> list[dict[str, Any]]:
        """`[wire_play(play) for play in view.history]`, encoding only the plays not seen yet.

        The dicts are shared between the lists returned for one round: read them, do not
        change them.
        """
        plays = self._plays
        if view.round != self._round or len(view.history) < len(plays):
            self._round, plays = view.round, []
            self._plays = plays
        plays.extend(map(wire_play, view.history[len(plays) :]))
        return list(plays)


# A legal move in wire form, made once per move: moves are interned, a game offers the same few
# hundred again and again, and a request lists a dozen of them. The dicts are shared between
# requests: read them, do not change them.
_wire_move = functools.lru_cache(maxsize=16384)(Move.to_wire)


def move_request(
    view: GameView,
    *,
    game_id: str | int,
    timeout_ms: int,
    seat_names: Sequence[str],
    latency_ms: float | None,
    time_bank_ms: int,
    history: list[dict[str, Any]] | None = None,
    game: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The body of `POST U/move` for the seat that `view` belongs to.

    `history` is the view's history already in wire form (`WireHistory.of(view)`), and `game`
    the game's `game_block`, for callers that send every move of a game; without them both are
    encoded here.
    """
    return {
        "protocol": PROTOCOL,
        "game": game_block(view.ruleset, game_id, timeout_ms) if game is None else game,
        "round": view.round,
        "you": {"seat": view.seat, "team": view.team, "hand": _cards(view.hand)},
        "table": _cards(view.table),
        "dealer": view.dealer,
        "deck_remaining": view.deck_remaining,
        "seats": [
            {
                "seat": seat.seat,
                "team": seat.team,
                "name": seat_names[seat.seat],
                "hand_size": seat.hand_size,
                "captured": seat.captured,
                "escobas": seat.escobas,
            }
            for seat in view.seats
        ],
        "scores": list(view.scores),
        "history": list(map(wire_play, view.history)) if history is None else history,
        "legal_moves": list(map(_wire_move, view.legal_moves)),
        "latency_ms": None if latency_ms is None else round(float(latency_ms), 2),
        "time_bank_ms": int(time_bank_ms),
        "lucky_deal": wire_lucky_deal(view.lucky_deal),
    }


def start_notice(
    *,
    ruleset: Ruleset,
    game_id: str | int,
    timeout_ms: int,
    seat: int,
    seat_names: Sequence[str],
) -> dict[str, Any]:
    """The body of `POST U/start`, sent to each seat before its game's first move."""
    return {
        "protocol": PROTOCOL,
        "game": game_block(ruleset, game_id, timeout_ms),
        "you": {"seat": seat, "team": ruleset.team_of(seat)},
        "seats": [
            {"seat": index, "team": ruleset.team_of(index), "name": name}
            for index, name in enumerate(seat_names)
        ],
    }


def end_notice(
    *,
    ruleset: Ruleset,
    game_id: str | int,
    timeout_ms: int,
    seat: int,
    seat_names: Sequence[str],
    result: Result,
    log_url: str | None,
) -> dict[str, Any]:
    """The body of `POST U/end`: the start notice plus the result and where the log lives."""
    notice = start_notice(
        ruleset=ruleset, game_id=game_id, timeout_ms=timeout_ms,
        seat=seat, seat_names=seat_names,
    )  # fmt: skip
    notice["result"] = {
        "winner": result.winner,
        "totals": list(result.totals),
        "reason": result.reason,
    }
    notice["log_url"] = log_url
    return notice


def info_reply(name: str, author: str, version: str) -> dict[str, str]:
    """The body a bot answers to `GET U` with."""
    return {"protocol": PROTOCOL, "name": name, "author": author, "version": version}
