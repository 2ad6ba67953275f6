"""A finished game's result, stored once: the game, its log, its seats' figures, its no-shows and
its bots' head-to-head totals, in one transaction that first locks the game row and returns if
the game is already finished (a second delivery of the same match). A game that ran past its
match's time limit, or that the runner could not finish, is aborted instead: no result, not rated.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from tournaments.bot_calls.runner import GameRecord
from tournaments.latency import nearest_rank_percentile
from tournaments.metrics import game_counted
from tournaments.models import Game, GameLog, HeadToHead, League, Seat
from tournaments.read_cache import game_scopes, reads_changed
from tournaments.selectors.fixed import fixed_instances, fixed_rows, model_columns
from tournaments.services.no_shows import game_no_shows_record
from tournaments.services.tallies import (
    counts_add,
    rows_insert,
    rows_update,
    tallies_game_aborted,
    tallies_game_finished,
)


def game_log_url(game_id: int | str) -> str:
    """Where anyone can read a game's log: the end notice tells the bots."""
    return f"{settings.ESCOBA_PUBLIC_URL.rstrip('/')}/api/games/{game_id}/log/"


# The game row's columns that its result sets; only these are written (the others, its seating,
# seed and start, are not the result's to change).
GAME_RESULT_FIELDS = (
    "status",
    "winner",
    "totals",
    "reason",
    "forfeit",
    "moves",
    "faults",
    "finished_at",
)

SEAT_FIGURES = (
    "moves",
    "faults",
    "fault_kinds",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_max_ms",
)


def seat_stats(record: GameRecord) -> dict[int, dict[str, Any]]:
    """Moves, faults by kind and latency figures per seat, from the runner's calls: what a bot's
    profile shows, stored once so that no page reads a log to draw it."""
    latencies: dict[int, list[float]] = defaultdict(list)
    moves: Counter[int] = Counter()
    for call in record.plays:
        moves[call.seat] += 1
        latencies[call.seat].append(call.latency_ms)
    kinds: dict[int, Counter[str]] = defaultdict(Counter)
    for call in record.calls:
        if call.fault is not None:
            kinds[call.seat][str(call.fault.kind)] += 1
    stats = {}
    for seat in set(moves) | set(kinds):
        seat_latencies = sorted(latencies.get(seat, []))
        figures: dict[str, float | None] = dict.fromkeys(
            ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms")
        )
        if seat_latencies:
            figures = {
                "latency_mean_ms": sum(seat_latencies) / len(seat_latencies),
                "latency_p50_ms": nearest_rank_percentile(seat_latencies, 50),
                "latency_p95_ms": nearest_rank_percentile(seat_latencies, 95),
                "latency_max_ms": seat_latencies[-1],
            }
        stats[seat] = {
            "moves": moves[seat],
            "faults": kinds[seat].total(),
            "fault_kinds": dict(kinds[seat].most_common()),
            **figures,
        }
    return stats


# What storing a game reads of its seats (each field it writes, so none is read again), in the
# model's order of fields, as ``Model.from_db`` takes them.
SEAT_COLUMNS = model_columns(
    Seat, {"id", "game_id", "seat", "team", "bot_id", *SEAT_FIGURES, "no_show"}
)


def game_finish(*, game_id: int, record: GameRecord) -> bool:
    """Store a finished game, its seats' figures and its no-shows in one transaction.

    Returns False, changing nothing, when the game was already stored (a second delivery of the
    same task); this check under the row lock is what makes "stored once" hold.

    The log is compressed and the seats' figures counted before the transaction begins: on
    SQLite a transaction holds the one write lock from its start, and when a league's last games
    end together every other writer would wait out that CPU work too.
    """
    log = GameLog(game_id=game_id, document=record.log, diagnostics=record.diagnostics,
                  faults=record.faults)  # fmt: skip
    return _game_store(game_id=game_id, record=record, log=log, stats=seat_stats(record))


@transaction.atomic
def _game_store(
    *, game_id: int, record: GameRecord, log: GameLog, stats: dict[int, dict[str, Any]]
) -> bool:
    """``game_finish``'s transaction: the result, the log, the seats and every tally."""
    result = record.log["result"]
    game = Game(
        id=game_id,
        status=Game.Status.FINISHED,
        winner=result["winner"],
        totals=result["totals"],
        reason=result["reason"],
        forfeit=result["forfeit_seat"],
        moves=len(record.plays),
        faults=len(log.faults),
        finished_at=timezone.now(),
    )
    stored = _game_result_write(game)
    if stored is None:
        return False
    game.league_id, game.seating = stored
    rated, pool, ruleset = fixed_rows(_league_of_game, game.league_id)[0]
    game.league = League(id=game.league_id, rated=rated, pool=pool, ruleset=ruleset)
    log.game = game
    rows_insert(rows=[log])
    seats = fixed_instances(Seat, _game_seats, game_id, SEAT_COLUMNS)
    for seat in seats:
        for name, value in stats.get(seat.seat, {}).items():
            setattr(seat, name, value)
    game_no_shows_record(game=game, record=record, seats=seats)  # ratings: sets seat.no_show
    for seat in seats:
        seat.finished_at = game.finished_at
    rows_update(rows=seats, fields=("finished_at", *SEAT_FIGURES, "no_show"))
    head_to_head_add(winner=game.winner, seats=seats)
    tallies_game_finished(game=game, seats=seats)  # the league's standings, crosstable, progress
    reads_changed(*game_scopes(game.id, game.league_id, game.seating))
    game_counted(pool=game.league.pool, moves=game.moves, calls=record.calls)
    return True


def _game_result_write(game: Game) -> tuple[int, list[int]] | None:
    """Write ``game``'s result (``GAME_RESULT_FIELDS``) if its row is still pending, and return
    its league and seating; None, writing nothing, if it is not.

    One ``UPDATE ... WHERE status = 'pending' RETURNING``: it takes the game row's lock first, as
    locking it for update did, and a second delivery of the same game, waiting on that lock,
    finds the row finished once the first commits and changes nothing. Its SQL is made here: a
    Django read, model and save cost the worker more CPU than the statement.
    """
    meta = Game._meta
    fields = [meta.get_field(name) for name in GAME_RESULT_FIELDS]
    quote = connection.ops.quote_name
    seating = meta.get_field("seating")
    sql = (
        f"UPDATE {quote(meta.db_table)} SET "
        f"{', '.join(f'{quote(field.column)} = %s' for field in fields)} "
        f"WHERE {quote(meta.pk.column)} = %s AND {quote(meta.get_field('status').column)} = %s "
        f"RETURNING {quote(meta.get_field('league').column)}, {quote(seating.column)}"
    )
    params = [field.get_db_prep_save(getattr(game, field.attname), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, game.id, Game.Status.PENDING])
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0], seating.from_db_value(row[1], None, connection)


def _league_of_game(league_id: int) -> QuerySet:
    """What storing a game reads of its league: a fixed statement (``fixed_rows``)."""
    return League.objects.filter(pk=league_id).order_by().values_list("rated", "pool", "ruleset")


def _game_seats(game_id: int) -> QuerySet:
    """A game's seats (``SEAT_COLUMNS``) in seat order (the model's, so the seats' rows are
    updated in the same order as ever): a fixed statement (``fixed_rows``)."""
    return Seat.objects.filter(game_id=game_id).order_by("seat").values_list(*SEAT_COLUMNS)


def head_to_head_add(*, winner: int | None, seats: list[Seat]) -> None:
    """Count one finished game in its bots' head-to-head totals (``HeadToHead``): a game for
    each bot against each bot on another team, a win if the bot's team won, a draw if nobody did.

    Call inside the transaction that stores the game. One statement makes the missing rows and
    adds to the others under their locks (``counts_add``), in one order, so games of the same
    bots stored at once wait for each other instead of deadlocking.
    """
    teams: defaultdict[int, set[int]] = defaultdict(set)
    for seat in seats:
        teams[seat.bot_id].add(seat.team)
    pairs = sorted(
        {(a.bot_id, b.bot_id) for a in seats for b in seats if a.team != b.team}
        - {(bot, bot) for bot in teams}
    )
    counts_add(
        rows=[
            HeadToHead(
                bot_id=bot,
                opponent_id=opponent,
                games=1,
                wins=int(winner in teams[bot]),
                draws=int(winner is None),
            )
            for bot, opponent in pairs
        ],
        keys=["bot", "opponent"],
        counts=["games", "wins", "draws"],
    )


@transaction.atomic
def game_abort(*, game_id: int, reason: str) -> bool:
    """Close a game that ran past the match's time limit, or that the runner could not finish:
    no result, not rated."""
    game = Game.objects.select_for_update().get(pk=game_id)
    if game.status != Game.Status.PENDING:
        return False
    game.status = Game.Status.ABORTED
    game.reason = reason
    game.finished_at = timezone.now()
    game.save(update_fields=["status", "reason", "finished_at"])
    tallies_game_aborted(game=game)
    reads_changed(*game_scopes(game.id, game.league_id, game.seating))
    return True
