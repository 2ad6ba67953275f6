"""Reads that take more than one query: league standings, crosstable, progress, and a league's
games page by page.

Standings, crosstable and progress are read from each league's running totals
(``tournaments.models.tallies``), kept in the transactions that store its games: a ladder's
league grows without end, and no read scans it. They are the league's own results (points,
sets won, drawn and lost): the one rating of a bot is its pool's, from
``tournaments.selectors.ratings``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection
from django.db.models import F, Prefetch, QuerySet

from games.ratings.sets import GameFacts, game_participants
from tournaments import observers
from tournaments.models import (
    Bot,
    Game,
    GameLog,
    League,
    LeaguePair,
    LeagueStanding,
    LeagueTally,
    Seat,
)
from tournaments.selectors.fixed import fixed_rows
from tournaments.selectors.ratings import current_ratings


def bots_schedulable() -> QuerySet[Bot]:
    """Bots a league may schedule: active (not paused by their owner) and not unhealthy.

    A bot whose health is still unknown (registered, never fully checked) is schedulable: its
    `GET U` answered `escoba/1` at registration.
    """
    return Bot.objects.filter(status=Bot.Status.ACTIVE).exclude(health=Bot.Health.UNHEALTHY)


def seats_with_bots(to_attr: str | None = None) -> Prefetch:
    """A game's seats with their bots, for ``prefetch_related``: the bots read in the same query
    without what no list of seats shows (the check report, a few KB of JSON each, the description
    and the secret). ``to_attr``: a plain list on each game under that name instead of
    ``game.seats.all()``, which costs Django a queryset per game (most of a list's CPU)."""
    seats = Seat.objects.select_related("bot").defer(
        "bot__last_check_report", "bot__description", "bot__secret"
    )
    return Prefetch("seats", queryset=seats, to_attr=to_attr)


def match_games_numbered() -> Prefetch:
    """A game's match with the ids, numbers, deals and status of all its games (the set's games),
    for ``prefetch_related``: what ``observers.game_sight`` reads to know whether another game in
    play shares the game's deal."""
    games = Game.objects.only("id", "match_id", "number", "seed", "status")
    return Prefetch("match__games", queryset=games)


def facts_of(
    seating: list[int],
    winner: int | None,
    totals: list[int],
    forfeit: int | None,
    team_of: Callable[[int], int],
) -> GameFacts:
    """A finished game's columns as the set scoring sees it (``games.ratings.sets``)."""
    return GameFacts(
        participants=tuple(game_participants(seating, team_of)),
        winner=winner,
        totals=tuple(totals),
        forfeit_team=None if forfeit is None else team_of(forfeit),
    )


def game_facts(game: Game, team_of: Callable[[int], int]) -> GameFacts:
    """A finished game (``seating``, ``winner``, ``totals``, ``forfeit`` loaded) as the set
    scoring sees it."""
    return facts_of(game.seating, game.winner, game.totals, game.forfeit, team_of)


@dataclass
class Standing:
    bot_id: int
    bot: str
    points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points_for: int = 0
    points_against: int = 0
    faults: int = 0
    sets_won: int = 0
    sets_drawn: int = 0
    sets_lost: int = 0
    rating: float | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    provisional: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        # The fields' own dict (in their order): ``dataclasses.asdict`` deep-copies each value.
        return dict(vars(self))


def league_standings(
    league: League, *, bots: list[tuple[int, str]] | None = None
) -> list[dict[str, Any]]:
    """One row per entered bot, best first: points (1 a win, ½ a draw), then game points.

    Read from the league's running totals (``LeagueStanding``, a row per bot kept as games and
    sets end), never from its games: a ladder's league grows without end. A set counts once it
    is over. ``rating`` is the bot's published rating in the league's pool (its current
    version's; None without one) with its 95 % interval (``rating_low``, ``rating_high``) and
    ``provisional``, the same figures as the rankings show; the league itself has no second Elo.
    ``bots``: the league's bots as ``(id, name)`` when the caller read them already.
    """
    if bots is None:
        return league_table(league)[0]
    rows = {bot_id: Standing(bot_id=bot_id, bot=name) for bot_id, name in bots}
    lines = fixed_rows(_standing_lines, league.pk)
    for bot_id, *figures in lines:
        if bot_id in rows:
            _set_figures(rows[bot_id], figures)
    ratings = current_ratings(pool=league.pool, bot_ids=list(rows)).values_list(
        "bot_id", "rating", "rating_low", "rating_high", "provisional"
    )
    for bot_id, *rating in ratings:
        _set_rating(rows[bot_id], *rating)
    return _ordered(rows.values())


def _set_figures(row: Standing, figures: list[Any]) -> None:
    for name, value in zip(STANDING_COLUMNS, figures, strict=True):
        setattr(row, name, value)
    row.points = row.wins + row.draws / 2


def _set_rating(row: Standing, rating: Any, low: Any, high: Any, provisional: Any) -> None:
    row.rating, row.provisional = float(rating), bool(provisional)
    row.rating_low, row.rating_high = float(low), float(high)


def _ordered(rows: Iterable[Standing]) -> list[dict[str, Any]]:
    ordered = sorted(
        rows, key=lambda r: (-r.points, -(r.points_for - r.points_against), -r.points_for, r.bot)
    )
    return [row.as_dict() for row in ordered]


STANDING_COLUMNS = (
    "games", "wins", "draws", "losses", "points_for", "points_against", "faults",
    "sets_won", "sets_drawn", "sets_lost",
)  # fmt: skip


# A league's bots by name, each with its standing line and its current version's rating in the
# league's pool (either absent: NULL), as ``league_standings`` and ``league_bot_names`` read
# them apart. Plain SQL (PostgreSQL and SQLite): a league page reads it on every request, and as
# a Django query its building cost more than its execution.
_TABLE_SQL = (
    "SELECT b.id, b.name, "
    + ", ".join(f"s.{name}" for name in STANDING_COLUMNS)
    + ", r.rating, r.rating_low, r.rating_high, r.provisional "
    "FROM tournaments_leagueentry e "
    "INNER JOIN tournaments_league l ON l.id = e.league_id "
    "INNER JOIN tournaments_bot b ON b.id = e.bot_id "
    "LEFT OUTER JOIN tournaments_leaguestanding s ON s.league_id = e.league_id "
    "AND s.bot_id = e.bot_id "
    "LEFT OUTER JOIN (tournaments_rating r INNER JOIN tournaments_botversion v "
    "ON v.id = r.version_id) ON r.bot_id = b.id AND r.pool = l.pool "
    "AND v.version = b.protocol_version "
    "WHERE e.league_id = %s ORDER BY b.name"
)


def league_table(league: League) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """``league_standings(league)`` and ``league_bot_names(league)`` (what its crosstable
    names) from one statement: its bots, their standing lines and their ratings are read
    together where the two read them in three queries."""
    with connection.cursor() as cursor:
        cursor.execute(_TABLE_SQL, [int(league.pk)])
        lines = cursor.fetchall()
    width = len(STANDING_COLUMNS)
    bots, rows = [], []
    for bot_id, name, *figures in lines:
        bots.append((bot_id, name))
        row = Standing(bot_id=bot_id, bot=name)
        if figures[0] is not None:
            _set_figures(row, figures[:width])
        if figures[width] is not None:
            _set_rating(row, *figures[width:])
        rows.append(row)
    return _ordered(rows), bots


def _cell(score: float, games: int) -> dict[str, Any]:
    return {"score": score, "games": games}


def _standing_lines(league_id: int) -> QuerySet[LeagueStanding]:
    return LeagueStanding.objects.filter(league_id=league_id).values_list(
        "bot_id", *STANDING_COLUMNS
    )


def _bot_names(league_id: int) -> QuerySet[Bot]:
    return Bot.objects.filter(leagues=league_id).order_by("name").values_list("id", "name")


def _pair_cells(league_id: int) -> QuerySet[LeaguePair]:
    return LeaguePair.objects.filter(league_id=league_id).values_list(
        "bot_id", "opponent_id", "score", "games"
    )


def league_bot_names(league: League) -> list[tuple[int, str]]:
    """The league's bots as ``(id, name)``, by name: what its standings and crosstable name.
    Like the league's standing lines and crosstable cells, a fixed statement (``fixed_rows``):
    a league page reads the three on every request."""
    return [(bot_id, name) for bot_id, name in fixed_rows(_bot_names, league.pk)]


def league_crosstable(
    league: League, *, bots: list[tuple[int, str]] | None = None
) -> dict[str, Any]:
    """Pairwise results: ``rows[i]["cells"][j]`` is bot i's score against bot j over its games.

    In 3-bot games each pair of bots counts as meeting once per game (by standing), and in
    partnership games the two bots of a table meet as opponents. Read from the league's running
    totals (``LeaguePair``, a row per pair that met). ``bots``: ``league_bot_names`` when the
    caller read them already.
    """
    if bots is None:
        bots = league_bot_names(league)
    pairs = fixed_rows(_pair_cells, league.pk)
    cells = {(a, b): (float(score), games) for a, b, score, games in pairs}
    return {
        "bots": [{"id": bot_id, "name": name} for bot_id, name in bots],
        "rows": [
            {
                "bot": bot_id,
                "cells": [
                    None if other_id == bot_id else _cell(*cells.get((bot_id, other_id), (0.0, 0)))
                    for other_id, _ in bots
                ],
            }
            for bot_id, _ in bots
        ],
    }


def league_progress(league: League) -> dict[str, int]:
    """Games done (finished or aborted) out of all scheduled, and bot faults so far, from the
    league's running totals (``LeagueTally``), a fixed statement (``fixed_rows``)."""
    tally = fixed_rows(_tally, league.pk)
    games, finished, aborted, faults = tally[0] if tally else (0, 0, 0, 0)
    return progress_of(games=games, finished=finished, aborted=aborted, faults=faults)


def _tally(league_id: int) -> QuerySet[LeagueTally]:
    return LeagueTally.objects.filter(league_id=league_id).values_list(
        "games", "finished", "aborted", "faults"
    )


def progress_of(*, games: int, finished: int, aborted: int, faults: int) -> dict[str, int]:
    """``league_progress`` from the columns of a league's ``LeagueTally``."""
    return {"done": finished + aborted, "total": games, "aborted": aborted, "faults": faults}


GAMES_PER_PAGE = 50
# What a page of games shows of each, and who sat where (team, bot name), in seat order.
GAME_LISTED = ("number", "match__number", "totals", "status", "winner", "faults")
_GAME_ROW_KEYS = ("number", "match_number", "totals", "status", "winner", "faults")


@dataclass
class KeysetPage:
    """One page of rows in id order, read from an index after (or before) a row id: the links
    to the pages around it carry ``after`` or ``before`` (None: no page that way)."""

    rows: list[Any]
    after: int | None
    before: int | None


def _league_games_seats(
    league_id: int,
    *,
    size: int,
    bot_ids: tuple[int, ...] = (),
    after: int | None = None,
    before: int | None = None,
) -> QuerySet[Game]:
    """The seats of the games of one page (``size`` games and one more, to know whether
    there is a page beyond) of the league's games in which all of ``bot_ids`` sat, after id
    ``after`` (or before id ``before``), by id then seat: ``(id, *GAME_LISTED, team, bot
    name)``, a game without seats once with None for those."""
    games = Game.objects.filter(league_id=league_id).exclude(observers.rated_games_in_play())
    for bot_id in bot_ids:
        games = games.filter(seats__bot_id=bot_id)
    if before is not None:
        games = games.filter(pk__lt=before).order_by("-pk")
    else:
        games = (games if after is None else games.filter(pk__gt=after)).order_by("pk")
    page = games.values("pk")
    page = (page.distinct() if bot_ids else page)[: size + 1]
    return (
        Game.objects.filter(pk__in=page)
        .order_by("pk", "seats__seat")
        .values_list("pk", *GAME_LISTED, "seats__team", "seats__bot__name")
    )


@functools.cache
def _first_games_page(size: int) -> functools.partial:
    """The statement of the first page of a league's games, one object per page size:
    ``fixed_rows`` compiles it once per process."""
    return functools.partial(_league_games_seats, size=size)


def league_games_page(
    *, league: League, bot_ids: list[int], after: int | None = None, before: int | None = None
) -> tuple[list[dict[str, Any]], KeysetPage]:
    """The bots of ``bot_ids`` (``{"id", "name"}``, by name) and a page of the league's games in
    which all of them sat, in schedule order (ids grow with the match and game numbers; rated
    games in play left out: nobody is told who sits at them, see tournaments/observers.py);
    fewer bots than distinct ids means some id is unknown.

    Each game a plain row: ``id``, ``number``, ``match_number``, ``totals``, ``status``,
    ``winner``, ``faults`` and ``seats`` ((team, bot name) per seat, in seat order), read in
    one query from an index after (or before) a row id: every page costs what the first does,
    however far it is. The first page of all games, the one most read, is a fixed statement
    (``fixed_rows``)."""
    bots = list(Bot.objects.filter(pk__in=bot_ids).order_by("name").values("id", "name"))
    size = GAMES_PER_PAGE
    if bot_ids or after is not None or before is not None:
        wanted = {"bot_ids": tuple(bot_ids), "after": after, "before": before}
        seats = list(_league_games_seats(league.pk, size=size, **wanted))
    else:
        seats = fixed_rows(_first_games_page(size), league.pk)
    games: dict[int, dict[str, Any]] = {}
    for game_id, *values, team, name in seats:
        game = games.get(game_id)
        if game is None:
            game = games[game_id] = {
                "id": game_id,
                **dict(zip(_GAME_ROW_KEYS, values, strict=True)),
            }
            game["seats"] = []
        if team is not None:
            game["seats"].append((team, name))
    rows = list(games.values())
    beyond = len(rows) > size
    if before is not None:
        rows = rows[1:] if beyond else rows
        return bots, KeysetPage(
            rows, rows[-1]["id"] if rows else None, rows[0]["id"] if beyond else None
        )
    rows = rows[:size]
    first = rows[0]["id"] if rows and after is not None else None
    return bots, KeysetPage(rows, rows[-1]["id"] if beyond else None, first)


def games_count(*, league_id: int | None = None, status: str | None = None) -> int:
    """How many games there are (of one league, in one state), from the leagues' running totals
    (``LeagueTally``): a sum over leagues, never a count over games. A plain statement, read by
    every page of the games API: as a Django aggregate, building it cost more than running it."""
    sql = "SELECT SUM(games), SUM(finished), SUM(aborted) FROM tournaments_leaguetally"
    params = [] if league_id is None else [int(league_id)]
    with connection.cursor() as cursor:
        cursor.execute(sql + (" WHERE league_id = %s" if params else ""), params)
        games, finished, aborted = (total or 0 for total in cursor.fetchone())
    by_status = {
        Game.Status.FINISHED: finished,
        Game.Status.ABORTED: aborted,
        Game.Status.PENDING: games - finished - aborted,
    }
    return by_status[status] if status else games


def game_for_sight(*, game_id: int) -> Game | None:
    """The game with what ``observers.game_sight`` reads (league, match, the match's games), or
    None: one game's view is decided from these, before anything of it is read."""
    games = Game.objects.select_related("league", "match").prefetch_related(match_games_numbered())
    return games.filter(pk=game_id).order_by().first()


def game_log_gzip(*, game_id: int) -> bytes | None:
    """The game's stored escoba-log/1 document as gzip bytes (None before it finished), reading
    only that column of the log table. Ask ``observers.game_sight`` first whether it may be
    shown; the log endpoint serves these bytes as they are to clients that accept gzip."""
    rows = GameLog.objects.filter(game_id=game_id).values_list("document_gzip", flat=True)
    stored = rows.first()
    return None if stored is None else bytes(stored)


def game_diagnostics(*, game: Game, viewer: AbstractBaseUser | AnonymousUser) -> dict | None:
    """What the runner recorded of each move request of ``game``, as ``viewer`` may see it.

    Every play (the call on which a seat forfeited too) has its round and play (1-based), seat,
    bot, the move played (null: the seat forfeited instead), ``latency_ms`` and ``fault`` with
    its ``detail``. Only plays of the viewer's own bots (``mine``) carry their ``debug`` text
    and the exact ``request`` body sent; for everyone else those are null. None when the game
    has no log yet.
    """
    log = GameLog.objects.filter(game=game).first()  # diagnostics need the log's plays
    if log is None:
        return None
    seating = list(game.seating)
    own: set[int] = set()
    if viewer.is_authenticated:
        own = set(
            Bot.objects.filter(owner_id=viewer.pk, pk__in=seating).values_list("pk", flat=True)
        )
    plays = []
    for row in log.diagnostics:
        bot = seating[row["seat"]] if row["seat"] < len(seating) else None
        mine = bot in own
        plays.append(
            {
                "round": row["round"],
                "play": row["play"],
                "seat": row["seat"],
                "bot": bot,
                "move": row["move"],
                "latency_ms": row["latency_ms"],
                "fault": row["fault"],
                "detail": row["detail"],
                "mine": mine,
                "debug": row.get("debug") if mine else None,
                "debug_truncated": bool(row.get("debug_truncated")) if mine else False,
                "request": row.get("request") if mine else None,
            }
        )
    return {"game": game.pk, "faults": log.faults, "plays": plays}


# A game's own columns as the games API shows them, with what its sight is decided from (its
# match's status, its league's ``rated``) and its faults from the log row (one small column).
GAME_COLUMNS = (
    "id", "league_id", "match_id", "number", "seed", "status", "winner", "totals", "reason",
    "forfeit", "moves", "rated", "started_at", "finished_at",
)  # fmt: skip


def games_rows(games: QuerySet[Game]) -> QuerySet[Game]:
    """``games`` as plain rows (dicts of ``GAME_COLUMNS``, ``fault_list``, ``match_status``,
    ``league_rated``): a page of the games API builds no model instance (most of its CPU was
    building some 400 of them, games, seats, bots and the sets' games)."""
    return games.values(
        *GAME_COLUMNS,
        fault_list=F("log__faults"),
        match_status=F("match__status"),
        league_rated=F("league__rated"),
    )


def games_seats_rows(game_ids: list[int]) -> dict[int, list[tuple]]:
    """Each game's seats in order, as tuples ``(seat, team, bot_id, bot_name, moves, faults,
    fault_kinds, no_show, latency_mean_ms, latency_p50_ms, latency_p95_ms, latency_max_ms)``:
    one plain query (``_page_rows``), no bot column that no list shows."""
    seats: dict[int, list[tuple]] = {game_id: [] for game_id in game_ids}
    rows = _page_rows(
        "SELECT s.game_id, s.seat, s.team, s.bot_id, b.name, s.moves, s.faults, s.fault_kinds, "
        "s.no_show, s.latency_mean_ms, s.latency_p50_ms, s.latency_p95_ms, s.latency_max_ms "
        "FROM tournaments_seat s INNER JOIN tournaments_bot b ON b.id = s.bot_id "
        "WHERE s.game_id IN ({ids}) ORDER BY s.game_id, s.seat",
        game_ids,
    )
    for game_id, seat, team, bot_id, name, moves, faults, kinds, no_show, *latency in rows:
        # as the model's fields read them: JSON decoded, SQLite's 0/1 as booleans
        kinds = json.loads(kinds) if isinstance(kinds, str) else kinds
        seats[game_id].append(
            (seat, team, bot_id, name, moves, faults, kinds, bool(no_show), *latency)
        )
    return seats


def sets_games_rows(match_ids: list[int]) -> dict[int, list[tuple[int, int, int, str]]]:
    """Each match's games as ``(id, number, seed, status)`` by number: what a game's sight and
    its ``duplicate`` part read of its set (one plain query, ``_page_rows``)."""
    games: dict[int, list[tuple[int, int, int, str]]] = {match_id: [] for match_id in match_ids}
    rows = _page_rows(
        "SELECT match_id, id, number, seed, status FROM tournaments_game "
        "WHERE match_id IN ({ids}) ORDER BY match_id, number",
        match_ids,
    )
    for match_id, *game in rows:
        games[match_id].append(tuple(game))
    return games


def _page_rows(sql: str, ids: list[int]) -> list[tuple]:
    """The rows of ``sql`` (PostgreSQL and SQLite alike) for the ids of one page's rows.

    For the few fixed reads of every page of the games and leagues API: building and compiling
    each as a Django query cost more than twice its execution (0.6 of 1.2 ms for the seats of 50
    games, docs/benchmarks-journal.md), on every request, for a statement that never changes.
    """
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql.format(ids=", ".join(["%s"] * len(ids))), [int(i) for i in ids])
        return cursor.fetchall()


LEAGUE_COLUMNS = (
    "id", "name", "status", "ruleset", "pool", "players", "games_per_pairing", "move_timeout_ms",
    "max_faults", "rated", "kind", "games_planned", "created_at", "started_at", "finished_at",
)  # fmt: skip


def leagues_rows(leagues: QuerySet[League]) -> QuerySet[League]:
    """``leagues`` as plain rows (dicts of ``LEAGUE_COLUMNS`` and the creator's
    ``creator_name``), for the leagues API: no model instance per league or bot."""
    return leagues.values(*LEAGUE_COLUMNS, creator_name=F("creator__username"))


TALLY_COLUMNS = ("games", "finished", "aborted", "faults")


def league_detail_rows(leagues: QuerySet[League]) -> QuerySet[League]:
    """``leagues_rows`` with each league's running totals (``tally_games``, ``tally_finished``,
    ``tally_aborted``, ``tally_faults``; None before its first game is written), read in the
    same query: what its progress shows (``progress_of``)."""
    tally = {f"tally_{name}": F(f"tally__{name}") for name in TALLY_COLUMNS}
    return leagues_rows(leagues).annotate(**tally)


def leagues_bots_rows(league_ids: list[int]) -> dict[int, list[tuple[int, str]]]:
    """Each league's entered bots as ``(id, name)``, by name (one plain query, ``_page_rows``:
    a page of the leagues API reads some 500)."""
    bots: dict[int, list[tuple[int, str]]] = {league_id: [] for league_id in league_ids}
    entries = _page_rows(
        "SELECT e.league_id, e.bot_id, b.name FROM tournaments_leagueentry e "
        "INNER JOIN tournaments_bot b ON b.id = e.bot_id "
        "WHERE e.league_id IN ({ids}) ORDER BY b.name",
        league_ids,
    )
    for league_id, bot_id, name in entries:
        bots[league_id].append((bot_id, name))
    return bots
