"""A game's page: its rows read in three statements compiled once per process
(``selectors.fixed``), made into the few instances the page and its template read.

Building a game with its league, match, log, seats' bots and set through the ORM
(``pages.game_find``, which the live streams read) cost most of an uncached game page: three
queries compiled and a dozen instances built through querysets and prefetches on every request
(docs/benchmarks-journal.md, "The bot and game pages"). The rows are the same; the instances are
built as the ORM builds them from a row (``Model.from_db``), with only the columns the page reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Model, QuerySet

from tournaments import observers
from tournaments.models import Bot, Game, GameLog, League, Match, Seat
from tournaments.selectors import leagues as selectors
from tournaments.selectors.fixed import fixed_rows, model_columns


def _instance(model: type[Model], values: dict[str, Any]) -> Any:
    """A ``model`` instance of the columns ``values`` (by attribute name), as the ORM builds one
    from a row: the others deferred."""
    names = model_columns(model, values)
    return model.from_db(DEFAULT_DB_ALIAS, names, [values[name] for name in names])


def _taken(row: list, names: tuple[str, ...]) -> dict[str, Any]:
    """The first values of ``row`` by ``names``, taken off it."""
    taken = dict(zip(names, row, strict=False))
    del row[: len(names)]
    return taken


_PAGE_GAME = ("id", "league_id", "match_id", "number", "seed", "seating", "status", "winner",
              "totals", "reason", "forfeit")  # fmt: skip
_PAGE_RELATED = {League: ("name", "ruleset", "kind", "rated"), Match: ("number", "status"),
                 GameLog: ("document_gzip", "diagnostics_gzip", "faults")}  # fmt: skip
_PAGE_SEAT = ("id", "game_id", "seat", "team", "bot_id", "moves", "faults", "latency_mean_ms",
              "latency_max_ms")  # fmt: skip


def _page_game(game_id: int) -> QuerySet[Game]:
    return Game.objects.filter(pk=game_id).order_by().values_list(
        *_PAGE_GAME, "log__game_id",
        *(f"league__{name}" for name in _PAGE_RELATED[League]),
        *(f"match__{name}" for name in _PAGE_RELATED[Match]),
        *(f"log__{name}" for name in _PAGE_RELATED[GameLog]),
    )  # fmt: skip


def _page_seats(game_id: int) -> QuerySet[Seat]:
    return (
        Seat.objects.filter(game_id=game_id)
        .order_by("seat")
        .values_list(*_PAGE_SEAT, "bot__name", "bot__owner_id")
    )


def _page_set_games(game_id: int) -> QuerySet[Game]:
    return (
        Game.objects.filter(match__games__id=game_id)
        .order_by("number")
        .values_list("id", "seed", "status")
    )


@dataclass
class GamePage:
    """What a game's page shows: the game (with its league, match and log, ``None`` before it
    is played), its seats in seat order with their bots, what anyone may see of it (as
    ``observers.game_sight``) and the other games of its set, in order."""

    game: Game
    log: GameLog | None
    seats: list[Seat]
    sight: observers.GameSight
    other_game_ids: list[int]


def game_page(game_id: int) -> GamePage | None:
    """The game's page (``GamePage``), or None: in three statements compiled once per process
    (``fixed_rows``), its rows made into the instances the page reads."""
    rows = fixed_rows(_page_game, game_id)
    if not rows:
        return None
    row = list(rows[0])
    game = _instance(Game, _taken(row, _PAGE_GAME))
    log_id = row.pop(0)
    league, match, log = (
        _instance(model, {"id": pk, **_taken(row, _PAGE_RELATED[model])})
        for model, pk in ((League, game.league_id), (Match, game.match_id), (GameLog, None))
    )
    Game.league.field.set_cached_value(game, league)
    Game.match.field.set_cached_value(game, match)
    if log_id is None:
        log = None
    else:
        log.game_id = log_id
    Game.log.related.set_cached_value(game, log)
    seats = []
    for *seat_values, name, owner_id in fixed_rows(_page_seats, game_id):
        seat = _instance(Seat, dict(zip(_PAGE_SEAT, seat_values, strict=True)))
        bot = _instance(Bot, {"id": seat.bot_id, "name": name, "owner_id": owner_id})
        Seat.bot.field.set_cached_value(seat, bot)
        seats.append(seat)
    set_games = fixed_rows(_page_set_games, game_id)
    sight = observers.sight_of(
        game_id=game.pk,
        status=game.status,
        seed=game.seed,
        match_status=match.status,
        set_games=set_games,
        anonymous=observers.league_plays_anonymously(league),
    )
    others = [other_id for other_id, _, _ in set_games if other_id != game.pk]
    return GamePage(game=game, log=log, seats=seats, sight=sight, other_game_ids=others)


def game_log_document(*, game: Game) -> dict[str, Any] | None:
    """The log as the replay shows it: the engine's document plus the runner's public per-play
    latency and faults (``meta[round][play]``, as in the diagnostics API) and the list of faults;
    None before it is played (a game without a ``GameLog`` row)."""
    log: GameLog | None = getattr(game, "log", None)
    if log is None:
        return None
    return {**log.document, "meta": log.meta, "faults": log.faults}


def game_own_plays(
    *, game: Game, seats: list[Seat], viewer: AbstractBaseUser | AnonymousUser
) -> list[dict[str, Any]]:
    """The plays of ``viewer``'s own bots in ``game`` (its ``seats``, with their bots) with
    their private ``debug`` text and ``request`` body (``selectors.game_diagnostics``); [] for
    anyone owning none of its bots."""
    if not viewer.is_authenticated or viewer.pk not in {seat.bot.owner_id for seat in seats}:
        return []
    diagnostics = selectors.game_diagnostics(game=game, viewer=viewer) or {"plays": []}
    keys = ("round", "play", "debug", "debug_truncated", "request")
    return [
        {key: play[key] for key in keys}
        for play in diagnostics["plays"]
        if play["mine"] and play["move"] is not None
    ]
