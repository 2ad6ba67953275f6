"""The rows of finished, rated leagues, made without the services and written in bulk.

``benchmarks.pool_data`` plans the leagues (bots, seeds, schedules, ids reserved in advance)
and hands them out in chunks; ``chunk_write`` plays every game of a chunk with the engine from
its scheduled seed (``play_game``: a random legal move per play from a generator seeded by the
game's seed, a latency per play drawn from the same generator) and writes, in one transaction,
exactly the rows that ``league_create``, ``league_start``, ``match_begin``, ``game_finish``,
``match_finish`` (``rated_set_record``) and ``league_finish_if_done`` would have left: the
league and its entries, matches and their bots, games, logs, seats with their figures, rated
sets with their players and pair scores, and the running totals those services keep
(head to head, pair and version totals), added to under their row locks. PostgreSQL receives the
rows by ``COPY``; another database (SQLite in the tests) by batched ``INSERT``.

What is not written is what the real services leave to background tasks: the deal baselines
of the luck correction (a rated set stays uncorrected, as it is until its games are valued)
and the metrics counters in Redis. The ratings are fitted by ``benchmarks.pool_data`` through
``ratings_fit`` itself. tests/performance/test_pool_data.py fills a pool both ways and compares.
"""

from __future__ import annotations

import datetime
import gc
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import deflate
import orjson

from games.engine import Game as EngineGame
from games.engine import Ruleset
from games.ratings.sets import GameFacts, fresh_set_pair_scores, game_participants
from games.scheduling import ScheduledMatch
from tournaments.latency import nearest_rank_percentile

# What a match records as the worker that played it, and its claim's prefix.
WORKER = "pool-data"
# Each play's latency (ms) is drawn in this range, as a quick bot's.
LATENCY_MS = (0.2, 3.0)
LATENCY_HUNDREDTHS = range(round(LATENCY_MS[0] * 100), round(LATENCY_MS[1] * 100) + 1)


class Play(NamedTuple):
    """One play as the runner records it: its seat, 1-based round and play, move and latency."""

    seat: int
    round: int
    play: int
    move: str
    latency_ms: float


def play_game(ruleset: Ruleset, seed: int) -> tuple[dict[str, Any], list[Play]]:
    """A game of ``seed`` played by the engine: a random legal move per play, then a latency per
    play (whole hundredths of a ms), all drawn from one generator seeded by ``seed``, so the same
    seed gives the same game whichever filler plays it. Returns the engine's log and the plays.

    The engine's ``play_random`` makes the moves: the compiled build plays the whole game in C,
    several times faster than choosing from ``legal_moves()`` here. The plays are read back from
    the log, which the game needs anyway."""
    rng = random.Random(seed)
    game = EngineGame.new(ruleset, seed=seed)
    game.play_random(rng, to_game_end=True)
    log = game.log()
    draw = rng.random
    low, steps = LATENCY_HUNDREDTHS.start, len(LATENCY_HUNDREDTHS)
    plays: list[Play] = []
    append = plays.append
    for round_number, logged in enumerate(log["rounds"], 1):
        for play, p in enumerate(logged["plays"], 1):
            capture = p["capture"]
            move = p["card"] + ":" + "+".join(capture) if capture else p["card"]  # Move.to_str()
            append(Play(p["seat"], round_number, play, move, (low + int(draw() * steps)) / 100))
    return log, plays


class Played(NamedTuple):
    """A game played and packed as ``game_finish`` stores it."""

    seed: int
    result: dict[str, Any]
    moves: int
    log_gzip: bytes
    diagnostics_gzip: bytes
    figures: dict[int, dict[str, Any]]


# gzip levels of libdeflate (``deflate``), which packs at its level 6 about 2x faster than zlib
# at level 6 and 4x faster than zlib at level 9 (``packed.LEVEL_LOG``), for a log 7 % larger
# and diagnostics 1 % smaller (docs/benchmarks.md, "Reads at scale"). ``packed.unpack`` reads any
# gzip; the decoded values are the services'.
LEVEL_LOG = 6
LEVEL_DIAGNOSTICS = 6


def game_played(ruleset: Ruleset, seed: int) -> Played:
    log, plays = play_game(ruleset, seed)
    return Played(
        seed,
        log["result"],
        len(plays),
        bytes(deflate.gzip_compress(orjson.dumps(log), LEVEL_LOG)),
        bytes(deflate.gzip_compress(diagnostics_json(plays), LEVEL_DIAGNOSTICS)),
        seat_figures(plays),
    )


# Games played once and reused when a chunk asks for ``distinct_logs`` (see ``ChunkTask``).
_reused: dict[int, Played] = {}
# The seeds of reused logs: ``REUSED_SEED + n`` for n below ``distinct_logs``.
REUSED_SEED = 1 << 40

# The JSON of each latency a play may have: its repr.
_LATENCY_JSON = {h / 100: repr(h / 100) for h in LATENCY_HUNDREDTHS}


def diagnostics_json(plays: list[Play]) -> bytes:
    """The plays as ``GameLog.diagnostics`` keeps them (``PlayCall.diagnostics``, keys in its
    order) for calls that each made a play, with no fault, debug text or request body. Written
    as JSON text rather than as a dict per play for orjson (a game has some 260 plays): a move's
    text has no character JSON escapes."""
    text = _LATENCY_JSON
    rows = [
        f'{{"round":{p.round},"play":{p.play},"move":"{p.move}","seat":{p.seat},'
        f'"latency_ms":{text[p.latency_ms]},"fault":null,"detail":null,"debug":null,'
        f'"debug_truncated":false,"request":null}}'
        for p in plays
    ]
    return ("[" + ",".join(rows) + "]").encode()


def seat_figures(plays: list[Play]) -> dict[int, dict[str, Any]]:
    """Moves and latency figures per seat, as ``services.matches._seat_stats`` stores them for
    plays without faults."""
    latencies: dict[int, list[float]] = defaultdict(list)
    for p in plays:
        latencies[p.seat].append(p.latency_ms)
    figures = {}
    for seat, values in latencies.items():
        values.sort()
        figures[seat] = {
            "moves": len(values),
            "latency_mean_ms": sum(values) / len(values),
            "latency_p50_ms": nearest_rank_percentile(values, 50),
            "latency_p95_ms": nearest_rank_percentile(values, 95),
            "latency_max_ms": values[-1],
        }
    return figures


@dataclass(frozen=True)
class LeagueTask:
    """One league to write: its ids (every table's first id, reserved by the planner), name,
    seed, entered bots in entry order, each bot's version id, and its schedule."""

    ids: dict[str, int]
    name: str
    seed: int
    bot_ids: list[int]
    versions: dict[int, int]
    schedule: list[ScheduledMatch]


@dataclass(frozen=True)
class ChunkTask:
    """Leagues written in one transaction, and what every league of the pool shares."""

    leagues: list[LeagueTask]
    ruleset: dict[str, Any]
    pool: str
    creator_id: int
    move_timeout_ms: int
    max_faults: int
    # 0: every game is played from its own scheduled seed. N: games take their logs from N
    # games played once (seeds ``REUSED_SEED`` + 0..N-1), each game's seed being its log's: for
    # a pool of many games on a machine short of CPU (the deals repeat; nothing else differs).
    distinct_logs: int = 0


@dataclass
class Totals:
    """The running totals a chunk adds (``HeadToHead``, ``PairTotal``, ``VersionTotal``)."""

    head_to_head: dict[tuple[int, int], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0])
    )
    pairs: dict[tuple[int, int], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )
    versions: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))


# Rows of each table, keyed by the table's name in ``Tables``; each row a tuple in its column order.
Rows = dict[str, list[tuple]]


class Tables:
    """Table and column names of what a league leaves, from the models (read after
    ``django.setup()``)."""

    def __init__(self) -> None:
        from tournaments import models

        self.names = {
            "league": models.League._meta.db_table,
            "entry": models.LeagueEntry._meta.db_table,
            "match": models.Match._meta.db_table,
            "match_bot": models.Match.bots.through._meta.db_table,
            "game": models.Game._meta.db_table,
            "log": models.GameLog._meta.db_table,
            "seat": models.Seat._meta.db_table,
            "rated_set": models.RatedSet._meta.db_table,
            "rated_set_player": models.RatedSet.players.through._meta.db_table,
            "set_score": models.SetScore._meta.db_table,
            "head_to_head": models.HeadToHead._meta.db_table,
            "pair_total": models.PairTotal._meta.db_table,
            "version_total": models.VersionTotal._meta.db_table,
        }


# The columns written, in row order. A column left out keeps its database default, so a new
# NOT NULL column without one makes the COPY fail rather than leave rows the services would not.
COLUMNS = {
    "league": (
        "id", "name", "creator_id", "ruleset", "pool", "players", "games_per_pairing",
        "move_timeout_ms", "max_faults", "rated", "kind", "seed", "status", "games_planned",
        "created_at", "started_at", "finished_at",
    ),
    "entry": ("id", "league_id", "bot_id", "created_at"),
    "match": (
        "id", "league_id", "number", "round", "seed", "status", "attempts", "worker", "claim",
        "heartbeat_at", "created_at", "started_at", "finished_at", "versions",
    ),
    "match_bot": ("id", "match_id", "bot_id"),
    "game": (
        "id", "league_id", "match_id", "number", "seed", "seating", "status", "winner", "totals",
        "reason", "forfeit", "moves", "faults", "rated", "started_at", "finished_at",
    ),
    "log": ("game_id", "document_gzip", "diagnostics_gzip", "faults"),
    "seat": (
        "id", "game_id", "seat", "team", "bot_id", "moves", "faults", "latency_mean_ms",
        "latency_p50_ms", "latency_p95_ms", "latency_max_ms", "fault_kinds", "no_show",
        "finished_at",
    ),
    "rated_set": (
        "id", "match_id", "pool", "games", "created_at", "coefficient_id", "corrected_at",
    ),
    "rated_set_player": ("id", "ratedset_id", "botversion_id"),
    "set_score": (
        "id", "rated_set_id", "pool", "player_id", "opponent_id", "twelfths", "controls",
        "band", "correction",
    ),
}  # fmt: skip


def league_sizes(schedule: list[ScheduledMatch]) -> dict[str, int]:
    """How many ids of each table a league with ``schedule`` takes (one row each)."""
    matches = len(schedule)
    games = sum(len(m.games) for m in schedule)
    return {
        "league": 1,
        "entry": len({b for m in schedule for b in m.participants}),
        "match": matches,
        "match_bot": sum(len(m.participants) for m in schedule),
        "game": games,
        "seat": sum(len(seating) for m in schedule for seating in m.games),
        "rated_set": matches,
        "rated_set_player": sum(len(m.participants) for m in schedule),
        "set_score": sum(len(m.participants) * (len(m.participants) - 1) // 2 for m in schedule),
    }


def league_rows(
    task: LeagueTask, chunk: ChunkTask, ruleset: Ruleset, now: datetime.datetime, totals: Totals
) -> Rows:
    """Play the league's games and return its rows; add its results to ``totals``."""
    ids = dict(task.ids)
    rows: Rows = defaultdict(list)
    ruleset_json = orjson.dumps(chunk.ruleset).decode()
    games_planned = sum(len(m.games) for m in task.schedule)
    moment = now
    tick = datetime.timedelta(milliseconds=1)

    def take(table: str) -> int:
        ids[table] += 1
        return ids[table] - 1

    league_id = take("league")
    for bot_id in task.bot_ids:
        rows["entry"].append((take("entry"), league_id, bot_id, now))
    for planned in task.schedule:
        match_id = take("match")
        started = moment
        versions = {str(b): task.versions[b] for b in sorted(planned.participants)}
        facts = []
        for bot_id in planned.participants:
            rows["match_bot"].append((take("match_bot"), match_id, bot_id))
        for number, (seating, seed) in enumerate(zip(planned.games, planned.seeds, strict=True), 1):
            game_id = take("game")
            if chunk.distinct_logs:
                seed = REUSED_SEED + seed % chunk.distinct_logs
                played = _reused.get(seed) or _reused.setdefault(seed, game_played(ruleset, seed))
            else:
                played = game_played(ruleset, seed)
            result = played.result
            moment += tick
            rows["game"].append((
                game_id, league_id, match_id, number, seed, orjson.dumps(list(seating)).decode(),
                "finished", result["winner"], orjson.dumps(result["totals"]).decode(),
                result["reason"], result["forfeit_seat"], played.moves, 0, True, started, moment,
            ))  # fmt: skip
            rows["log"].append((game_id, played.log_gzip, played.diagnostics_gzip, []))
            for seat, bot_id in enumerate(seating):
                f = played.figures.get(seat)
                rows["seat"].append((
                    take("seat"), game_id, seat, ruleset.team_of(seat), bot_id,
                    f["moves"] if f else 0, 0,
                    f and f["latency_mean_ms"], f and f["latency_p50_ms"],
                    f and f["latency_p95_ms"], f and f["latency_max_ms"], "{}", False, moment,
                ))  # fmt: skip
            participants = game_participants(seating, ruleset.team_of)
            head_to_head_count(totals, result["winner"], seating, ruleset)
            facts.append(
                GameFacts(
                    participants=tuple((task.versions[b], team) for b, team in participants),
                    winner=result["winner"],
                    totals=tuple(result["totals"]),
                    forfeit_team=None
                    if result["forfeit_seat"] is None
                    else ruleset.team_of(result["forfeit_seat"]),
                )
            )
        rows["match"].append((
            match_id, league_id, planned.number, planned.round, planned.seed, "finished", 1,
            WORKER, f"{WORKER}-{match_id}", started, now, started, moment,
            orjson.dumps(versions).decode(),
        ))  # fmt: skip
        rated_set_id = take("rated_set")
        rows["rated_set"].append(
            (rated_set_id, match_id, chunk.pool, len(planned.games), moment, None, None)
        )
        version_ids = sorted(task.versions[b] for b in planned.participants)
        for version_id in version_ids:
            rows["rated_set_player"].append((take("rated_set_player"), rated_set_id, version_id))
            totals.versions[version_id][0] += 1
            totals.versions[version_id][1] += len(planned.games)
        for a, b, score in fresh_set_pair_scores(facts):
            twelfths = round(12 * score)
            rows["set_score"].append(
                (take("set_score"), rated_set_id, chunk.pool, a, b, twelfths, None, None, 0)
            )
            totals.pairs[(a, b)][0] += 1
            totals.pairs[(a, b)][1] += twelfths
    rows["league"].append((
        league_id, task.name, chunk.creator_id, ruleset_json, chunk.pool, ruleset.players,
        2, chunk.move_timeout_ms, chunk.max_faults, True, "league", task.seed, "finished",
        games_planned, now, now, moment,
    ))  # fmt: skip
    return rows


def head_to_head_count(totals: Totals, winner: int | None, seating, ruleset: Ruleset) -> None:
    """Count one game in the head-to-head totals, as ``services.matches.head_to_head_add``."""
    teams: dict[int, set[int]] = defaultdict(set)
    for seat, bot_id in enumerate(seating):
        teams[bot_id].add(ruleset.team_of(seat))
    seats = [(bot_id, ruleset.team_of(seat)) for seat, bot_id in enumerate(seating)]
    pairs = {(a, b) for a, ta in seats for b, tb in seats if ta != tb} - {(b, b) for b in teams}
    for bot, opponent in pairs:
        cell = totals.head_to_head[(bot, opponent)]
        cell[0] += 1
        cell[1] += int(winner in teams[bot])
        cell[2] += int(winner is None)


def chunk_write(cursor: Any, vendor: str, tables: Tables, chunk: ChunkTask) -> int:
    """Play and write every league of ``chunk`` and add its totals, inside the caller's
    transaction (``cursor``: a DB-API cursor, psycopg's for COPY on PostgreSQL). Returns the
    games written."""
    ruleset = Ruleset.from_dict(chunk.ruleset)
    now = datetime.datetime.now(datetime.UTC)
    totals = Totals()
    rows: Rows = defaultdict(list)
    # What a game makes (its log's dicts and lists, rows) holds no reference cycle: freed by
    # reference counts. The collector stays off while the games are played, so its collections
    # do not walk the chunk's objects again and again (about a tenth of a game's CPU).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for task in chunk.leagues:
            for table, table_rows in league_rows(task, chunk, ruleset, now, totals).items():
                rows[table] += table_rows
    finally:
        if collecting:
            gc.enable()
    if vendor != "postgresql":
        rows = {
            table: [_sqlite_row(row) for row in table_rows] for table, table_rows in rows.items()
        }
    for table in COLUMNS:  # in the order of their foreign keys
        rows_write(
            cursor, vendor, tables.names[table], COLUMNS[table], rows.get(table, []),
            BINARY_TYPES.get(table, ()),
        )  # fmt: skip
    totals_add(cursor, tables, chunk.pool, totals)
    return len(rows["game"])


def _sqlite_row(row: tuple) -> tuple:
    """Values as Django's SQLite backend stores them: aware times as naive UTC text, JSON values
    (lists) as their text."""
    return tuple(
        value.replace(tzinfo=None).isoformat(" ")
        if isinstance(value, datetime.datetime)
        else orjson.dumps(value).decode()
        if isinstance(value, list)
        else value
        for value in row
    )


# Tables sent by binary COPY, with their columns' types: a log's two gzip documents (some 5 KB)
# would travel as hex text twice their size, for the server to parse back. Other tables' rows
# are short: text COPY, which needs no types.
BINARY_TYPES = {"log": ("bigint", "bytea", "bytea", "jsonb")}


def rows_write(
    cursor: Any, vendor: str, table: str, columns: tuple, rows: list[tuple], types: tuple = ()
) -> None:
    """Insert ``rows``: by ``COPY`` on PostgreSQL (binary when the columns' ``types`` are
    given), else by ``executemany``."""
    if not rows:
        return
    names = ", ".join(columns)
    if vendor == "postgresql":
        binary = " (FORMAT BINARY)" if types else ""
        with cursor.copy(f"COPY {table} ({names}) FROM STDIN{binary}") as copy:
            if types:
                copy.set_types(list(types))
            for row in rows:
                copy.write_row(row)
        return
    marks = ", ".join(["%s"] * len(columns))
    cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)


def totals_add(cursor: Any, tables: Tables, pool: str, totals: Totals) -> None:
    """Add a chunk's totals to the running ones, making rows that do not exist yet: one
    ``INSERT … ON CONFLICT DO UPDATE`` per table, keys in ascending order (the order the
    services lock them in, so writers of shared bots wait for each other, never deadlock)."""
    upserts = [
        (
            tables.names["head_to_head"], ("bot_id", "opponent_id"), ("games", "wins", "draws"),
            [(*key, *value) for key, value in sorted(totals.head_to_head.items())],
        ),
        (
            tables.names["pair_total"], ("pool", "player_id", "opponent_id"),
            ("sets", "twelfths", "correction"),
            [(pool, *key, *value, 0) for key, value in sorted(totals.pairs.items())],
        ),
        (
            tables.names["version_total"], ("pool", "version_id"), ("sets", "games"),
            [(pool, key, *value) for key, value in sorted(totals.versions.items())],
        ),
    ]  # fmt: skip
    for table, keys, sums, rows in upserts:
        if not rows:
            continue
        columns = (*keys, *sums)
        marks = "(" + ", ".join(["%s"] * len(columns)) + ")"
        added = ", ".join(f"{name} = {table}.{name} + excluded.{name}" for name in sums)
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([marks] * len(rows))} "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {added}",
            [value for row in rows for value in row],
        )
