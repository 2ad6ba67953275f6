"""Playing a match: load and lock it, play its unfinished games, store each result as it comes.

Games are I/O bound on bots, so every worker process keeps one asyncio event loop in a background
thread, with one shared ``tournaments.bot_calls.caller.Caller`` (keep-alive connections per bot,
shared by every game in the process). A match task, running in a worker thread, hands its games
to that loop and stores each finished game from its own thread, where the Django ORM may be
used. With
``--pool threads --concurrency N`` a worker has N matches, 2N games, in flight at once.

Restarts: nothing of a game is written until it is over, and then its result, seats and no-shows
are written in one transaction that first locks the game row and returns if the game is
already finished. So a match whose worker died restarts by playing its unfinished games again,
each on a fresh deal (``match_begin``), finished games stay as they were, and no game is stored
or rated twice even when two deliveries of the same task overlap.

Leases: the run playing a match holds it (``claim``, its task id) and writes ``heartbeat_at``
every ``HEARTBEAT_S`` seconds. Another delivery of the match (a duplicate sent by recovery) leaves
a match alone while its holder is alive, so a match is not played twice at once; a lease not
renewed for ``LEASE_S`` seconds, or a redelivery of the holder's own task, means the holder died
and the match is taken over.

A fault is charged only to whoever caused it. When the service itself is the cause, a game's
result is not stored: the game stays pending, the run releases the match (``match_release``) and
the game is played again later on a fresh deal (a new seed: its bots may remember the first
one), against the bots' addresses of that time. A game is the service's fault
(``service_fault``) when

- the process is stopping (``stopping``: the worker's warm shutdown, or interpreter exit) and the
  game has a ``connect`` or ``timeout`` fault: the bots may be stopping with us, our connections
  are being closed. A stopping run also stops waiting at once: its unfinished games are
  cancelled, never forfeited, and the task hands the match back to the queue;
- every seat's last call failed to connect: the whole table vanished at once, which is the
  network or our side far more often than a coincidence. It is retried at most
  ``MAX_ATTEMPTS`` times per match (``Match.attempts``); after that the games are stored as they
  were played, so bots that really are down still forfeit.

A bot whose owner moved it to another URL while a set was being played is not a fault of ours:
the rest of its games are played at the address they began with, and whatever its old address
does (refuses, stays silent) is charged to the bot, as any other fault. Replaying such a game
would hand the owner a free do-over of a deal the bot has seen.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import datetime
import logging
import os
import secrets
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from games.engine import Ruleset
from tournaments import observers, queueing
from tournaments.bot_calls.caller import Caller
from tournaments.bot_calls.faults import FaultKind
from tournaments.bot_calls.runner import BotEndpoint, GameRecord, PlayCall, play_game
from tournaments.latency import nearest_rank_percentile
from tournaments.live_feed import LiveFeeds
from tournaments.metrics import game_counted
from tournaments.models import Bot, Game, GameLog, HeadToHead, League, Match, Seat
from tournaments.read_cache import game_scopes, reads_changed
from tournaments.services.ladder import ladder_after_set
from tournaments.services.leagues import GROWING, league_finish_if_done
from tournaments.services.ratings import (
    game_no_shows_record,
    match_versions_record,
    rated_set_record,
)
from tournaments.services.version_tests import version_test_update

logger = logging.getLogger(__name__)

HEARTBEAT_S = 5.0
LEASE_S = 60.0
# A match released because of our own fault is sent again this many seconds times its attempts,
# and no more than MAX_ATTEMPTS times for the faults that might be the bots' after all.
RELEASE_RETRY_S = 10.0
MAX_ATTEMPTS = 5


def match_time_limit() -> float:
    """Seconds a match may take before its unfinished games are aborted (setting
    ``ESCOBA_MATCH_TIME_LIMIT_S``); the task's own Celery limits sit just above it."""
    return float(settings.ESCOBA_MATCH_TIME_LIMIT_S)


@dataclass(frozen=True)
class GamePlan:
    game_id: int
    seed: int
    bots: list[BotEndpoint]
    seating: list[int]


@dataclass(frozen=True)
class MatchPlan:
    match_id: int
    league_id: int
    ruleset: Ruleset
    timeout_ms: int
    max_faults: int
    games: list[GamePlan]
    attempts: int = 1
    # Rated play: the bots are told no names before a game ends (tournaments/observers.py).
    anonymous: bool = False


@dataclass(frozen=True)
class MatchOutcome:
    """``status``: played, skipped, or released (games left for later: ``retry_in_s``, or at
    once by another worker when this one is ``stopping``)."""

    status: str
    played: int = 0
    stored: int = 0
    aborted: int = 0
    released: int = 0
    retry_in_s: float = 0.0
    stopping: bool = False


class _Stopping:
    """Set once this process begins to stop; match runs wait on ``future`` with their games.

    Per process: a forked pool child starts with it clear.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._future: concurrent.futures.Future = concurrent.futures.Future()

    @property
    def future(self) -> concurrent.futures.Future:
        with self._lock:
            if self._pid != os.getpid():
                self._pid, self._future = os.getpid(), concurrent.futures.Future()
            return self._future

    def begin(self) -> None:
        future = self.future
        with self._lock:
            if not future.done():
                future.set_result(True)

    def clear(self) -> None:
        with self._lock:
            self._pid, self._future = os.getpid(), concurrent.futures.Future()

    def __bool__(self) -> bool:
        return self.future.done()


# The worker's warm shutdown sets it (tournaments.tasks), so does the interpreter's exit.
stopping = _Stopping()


class _GameLoop:
    """The worker process's event loop thread and its shared caller, started on first use.

    The pid check makes a forked pool child start its own loop rather than use its parent's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._caller: Caller | None = None
        self._feeds: LiveFeeds | None = None

    @property
    def feeds(self) -> LiveFeeds | None:
        """This process's live feeds (tournaments/live.py), once a game was submitted."""
        return self._feeds if self._pid == os.getpid() else None

    def _ensure(self) -> tuple[asyncio.AbstractEventLoop, Caller]:
        with self._lock:
            if self._pid != os.getpid() or self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="escoba-games", daemon=True)
                thread.start()
                self._loop, self._pid = loop, os.getpid()
                self._caller = Caller(allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS)
                self._feeds = LiveFeeds(loop)
                atexit.register(self._close)
            return self._loop, self._caller

    def _close(self) -> None:
        """Close the bots' keep-alive connections at exit, so none is left dangling.

        A game still being played would see its calls fail: ``stopping`` makes that ours.
        """
        stopping.begin()
        if self._loop is None or self._caller is None or self._pid != os.getpid():
            return
        closing = asyncio.run_coroutine_threadsafe(self._caller.aclose(), self._loop)
        try:
            closing.result(timeout=2)
        except Exception:  # exiting anyway: a bot that will not close must not block it
            logger.debug("closing the bot connections failed", exc_info=True)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def submit(self, plan: MatchPlan, game: GamePlan) -> concurrent.futures.Future:
        loop, caller = self._ensure()
        feeds, game_id = self._feeds, game.game_id
        assert feeds is not None

        def on_play(call: PlayCall) -> None:
            if call.move is None:
                feeds.forfeit(game_id, seat=call.seat)
            else:
                fault = None if call.fault is None else str(call.fault.kind)
                feeds.play(game_id, seat=call.seat, move=call.move.to_str(), fault=fault)

        feeds.start(game_id)
        coroutine = play_game(
            ruleset=plan.ruleset,
            seed=game.seed,
            bots=game.bots,
            game_id=game.game_id,
            timeout_ms=plan.timeout_ms,
            caller=caller,
            anonymous=plan.anonymous,
            max_faults=plan.max_faults,
            log_url=game_log_url(game.game_id),
            on_play=on_play,
        )
        return asyncio.run_coroutine_threadsafe(coroutine, loop)


_games_loop = _GameLoop()


def game_log_url(game_id: int | str) -> str:
    """Where anyone can read a game's log: the end notice tells the bots."""
    return f"{settings.ESCOBA_PUBLIC_URL.rstrip('/')}/api/games/{game_id}/log/"


def _lease_older_than(moment: datetime.datetime) -> Q:
    """Running matches whose holder has not renewed its lease since ``moment``: it died."""
    return Q(status=Match.Status.RUNNING) & (
        Q(heartbeat_at__lt=moment) | Q(heartbeat_at__isnull=True)
    )


def _release(cut_off: QuerySet[Match]) -> dict[int, str]:
    """Make matches whose run died pending again, under lock: their ids -> their league's status."""
    rows = list(
        cut_off.select_for_update(of=("self",))
        .order_by("id")
        .values_list("id", "league__status", "league_id")
    )
    released = {match_id: status for match_id, status, _ in rows}
    Match.objects.filter(id__in=released).update(
        status=Match.Status.PENDING, claim="", heartbeat_at=None
    )
    reads_changed(*(f"league:{league_id}" for _, _, league_id in rows))
    return released


def _send_again_if_resumed(match_id: int) -> None:
    """A begin that found the league paused leaves the match pending without a message. A
    resume that committed after that begin read the league, but marked the match before this run
    unmarked it, skipped it as still waiting: so, with the mark gone, a match now pending in a
    running league is sent again (only if no one has marked it since)."""
    resumed = Match.objects.filter(
        pk=match_id, status=Match.Status.PENDING, league__status=League.Status.RUNNING
    ).exists()
    if not resumed:
        return
    try:
        queueing.matches_enqueue([match_id], unless_queued=True)
    except queueing.BROKER_ERRORS:
        logger.warning("could not send match %s again; the sweep will", match_id, exc_info=True)


def _lease_alive(match: Match, now: datetime.datetime) -> bool:
    if match.heartbeat_at is None:
        return False
    return (now - match.heartbeat_at).total_seconds() < LEASE_S


@transaction.atomic
def match_begin(*, match_id: int, worker: str = "", claim: str = "") -> MatchPlan | None:
    """Lock the match and say which games to play, or None when there is nothing to do.

    A finished or cancelled match, or one whose league is not running (paused: resuming enqueues
    it again), is left alone; so is a match another live run holds (see the module docstring).
    Otherwise this run claims the match and its unfinished games, all of them pending because
    nothing of a game is stored before its end, are planned afresh.
    """
    # The league first, as every change of a league locks it (``league_lock``): a pause that
    # has committed is seen, and no match of a paused league starts. Not the ladder's, which no
    # one pauses and whose fill skips a locked row (``services.ladder``): its matches would
    # make the fills skip.
    league_id, kind = Match.objects.values_list("league_id", "league__kind").get(pk=match_id)
    leagues = League.objects if kind == League.Kind.LADDER else League.objects.select_for_update()
    league = leagues.get(pk=league_id)
    match = Match.objects.select_for_update().get(pk=match_id)
    now = timezone.now()
    if match.status in (Match.Status.FINISHED, Match.Status.CANCELLED):
        return None
    if league.status == League.Status.CANCELLED:
        match.status = Match.Status.CANCELLED
        match.save(update_fields=["status"])
        return None
    if league.status != League.Status.RUNNING:
        return None
    if match.status == Match.Status.RUNNING and match.claim != claim and _lease_alive(match, now):
        return None
    match.status = Match.Status.RUNNING
    match.attempts += 1
    match.started_at = now
    match.worker = worker
    match.claim = claim
    match.heartbeat_at = now
    match.save(
        update_fields=["status", "attempts", "started_at", "worker", "claim", "heartbeat_at"]
    )
    match_versions_record(match=match)  # a rated set is its bots' versions' of this moment
    games = list(match.games.filter(status=Game.Status.PENDING).order_by("number"))
    # A game that began before (a run that died, stopped or was released for our own fault) is
    # dealt afresh: its bots may have seen its cards, and a bot must never play a deal it knows.
    replayed = [game for game in games if game.started_at is not None]
    for game in replayed:
        game.seed = secrets.randbits(63)
    Game.objects.bulk_update(replayed, ["seed"])
    bot_ids = {bot_id for game in games for bot_id in game.seating}
    bots = {
        bot.id: BotEndpoint(url=bot.url, secret=bot.secret, name=bot.name)
        for bot in Bot.objects.filter(id__in=bot_ids)
    }
    Game.objects.filter(id__in=[g.id for g in games]).update(started_at=match.started_at)
    reads_changed(f"league:{league.id}", "games", *(f"game:{g.id}" for g in games))
    return MatchPlan(
        match_id=match.id,
        league_id=league.id,
        ruleset=Ruleset.from_dict(league.ruleset),
        timeout_ms=league.move_timeout_ms,
        max_faults=league.max_faults,
        games=[
            GamePlan(
                game_id=g.id, seed=g.seed, bots=[bots[b] for b in g.seating], seating=g.seating
            )
            for g in games
        ],
        attempts=match.attempts,
        anonymous=observers.league_plays_anonymously(league),
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


def _seat_stats(record: GameRecord) -> dict[int, dict[str, Any]]:
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


@transaction.atomic
def game_finish(*, game_id: int, record: GameRecord) -> bool:
    """Store a finished game, its seats' figures and its no-shows in one transaction.

    Returns False, changing nothing, when the game was already stored (a second delivery of the
    same task); this check under the row lock is what makes "stored once" hold.
    """
    game = Game.objects.select_for_update(of=("self",)).select_related("league").get(pk=game_id)
    if game.status != Game.Status.PENDING:
        return False
    result = record.log["result"]
    game.status = Game.Status.FINISHED
    game.winner = result["winner"]
    game.totals = result["totals"]
    game.reason = result["reason"]
    game.forfeit = result["forfeit_seat"]
    faults = record.faults
    game.moves = len(record.plays)
    game.faults = len(faults)
    game.finished_at = timezone.now()
    game.save()
    GameLog.objects.create(
        game=game, document=record.log, diagnostics=record.diagnostics, faults=faults
    )
    stats = _seat_stats(record)
    seats = list(game.seats.all())
    for seat in seats:
        for name, value in stats.get(seat.seat, {}).items():
            setattr(seat, name, value)
    game_no_shows_record(game=game, record=record, seats=seats)  # ratings: sets seat.no_show
    if game.league.rated:  # the deal's baseline value, for the luck correction (baselines)
        queueing.baselines_enqueue_on_commit([game.id])
    # One plain UPDATE per seat: bulk_update's CASE per field per row cost more CPU than the
    # rest of storing the game (docs/benchmarks.md, "The pool").
    for seat in seats:
        values = {name: getattr(seat, name) for name in (*SEAT_FIGURES, "no_show")}
        Seat.objects.filter(pk=seat.pk).update(finished_at=game.finished_at, **values)
    head_to_head_add(winner=game.winner, seats=seats)
    reads_changed(*game_scopes(game.id, game.league_id, game.seating))
    game_counted(pool=game.league.pool, moves=game.moves, calls=record.calls)
    return True


def head_to_head_add(*, winner: int | None, seats: list[Seat]) -> None:
    """Count one finished game in its bots' head-to-head totals (``HeadToHead``): a game for
    each bot against each bot on another team, a win if the bot's team won, a draw if nobody did.

    Call inside the transaction that stores the game. Rows are made first (one made by another
    transaction is waited for, then skipped), then added to under their locks, in one order, so
    games of the same bots stored at once wait for each other instead of deadlocking.
    """
    teams: defaultdict[int, set[int]] = defaultdict(set)
    for seat in seats:
        teams[seat.bot_id].add(seat.team)
    pairs = sorted(
        {(a.bot_id, b.bot_id) for a in seats for b in seats if a.team != b.team}
        - {(bot, bot) for bot in teams}
    )
    HeadToHead.objects.bulk_create(
        [HeadToHead(bot_id=bot, opponent_id=opponent) for bot, opponent in pairs],
        ignore_conflicts=True,
    )
    for bot, opponent in pairs:
        HeadToHead.objects.filter(bot_id=bot, opponent_id=opponent).update(
            games=F("games") + 1,
            wins=F("wins") + int(winner in teams[bot]),
            draws=F("draws") + int(winner is None),
        )


@transaction.atomic
def game_abort(*, game_id: int, reason: str) -> bool:
    """Close a game that ran past the match's time limit: no result, not rated."""
    game = Game.objects.select_for_update().get(pk=game_id)
    if game.status != Game.Status.PENDING:
        return False
    game.status = Game.Status.ABORTED
    game.reason = reason
    game.finished_at = timezone.now()
    game.save(update_fields=["status", "reason", "finished_at"])
    reads_changed(*game_scopes(game.id, game.league_id, game.seating))
    return True


@transaction.atomic
def match_finish(*, match_id: int) -> bool:
    """Mark the match finished once none of its games is pending; a rated league's finished
    match is recorded as a rated set of its pool in the same transaction."""
    match = Match.objects.select_for_update(of=("self",)).select_related("league").get(pk=match_id)
    if match.status != Match.Status.RUNNING:
        return False
    if match.games.filter(status=Game.Status.PENDING).exists():
        return False
    match.status = Match.Status.FINISHED
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "finished_at"])
    rated_set_record(match=match)
    game_ids = match.games.values_list("id", flat=True)
    reads_changed(f"league:{match.league_id}", "games", *(f"game:{i}" for i in game_ids))
    return True


def match_heartbeat(*, match_id: int, claim: str) -> bool:
    """Renew this run's lease on the match; False when the match is no longer ours."""
    renewed = Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, claim=claim).update(
        heartbeat_at=timezone.now()
    )
    return renewed == 1


def match_release(*, match_id: int, claim: str) -> bool:
    """Hand a match this run holds back, pending: its unfinished games are played again later.

    The worker stays recorded, so a restarting worker's recovery finds the match's league.
    """
    held = Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, claim=claim)
    league_id = held.values_list("league_id", flat=True).first()
    released = held.update(status=Match.Status.PENDING, claim="", heartbeat_at=None)
    if released:
        reads_changed(f"league:{league_id}")
    return released == 1


def _renew_lease(match_id: int, claim: str) -> None:
    """A missed heartbeat costs nothing while the next one lands; a busy database must not stop
    the games, so its error is logged, not raised (storing the next game would raise it)."""
    try:
        match_heartbeat(match_id=match_id, claim=claim)
    except OperationalError:
        logger.warning("match %s: heartbeat failed", match_id, exc_info=True)


OUR_FAULT_KINDS = frozenset({FaultKind.CONNECT, FaultKind.TIMEOUT})


def _all_seats_lost_at_once(record: GameRecord, players: int) -> bool:
    """Every seat's last call (the forfeit's included) failed to connect."""
    last = {call.seat: call.fault for call in record.calls}  # each seat's last call wins
    return all(
        (fault := last.get(seat)) is not None and fault.kind == FaultKind.CONNECT
        for seat in range(players)
    )


def service_fault(plan: MatchPlan, game: GamePlan, record: GameRecord) -> str | None:
    """Why this finished game's faults are ours rather than its bots' (then it is not stored),
    or None. The rules are in the module docstring."""
    kinds = {call.fault.kind for call in record.calls if call.fault is not None}
    if not kinds:
        return None
    if stopping and kinds & OUR_FAULT_KINDS:
        return "the service was stopping"
    if plan.attempts >= MAX_ATTEMPTS:
        return None
    if _all_seats_lost_at_once(record, len(game.bots)):
        return "every seat lost its connection at once"
    return None


def _live(game_id: int, status: str, league_id: int | None = None) -> None:
    """Tell the game's live viewers how it ended here, and its league's pages that they
    changed (tournaments/live.py); nothing when this process played no game."""
    feeds = _games_loop.feeds
    if feeds is None:
        return
    feeds.end(game_id, status)
    if league_id is not None:
        feeds.notify("league", league_id)


def _abort_all(pending: set, futures: dict, match_id: int, league_id: int) -> int:
    aborted = 0
    for future in pending:
        future.cancel()
        game_id = futures[future].game_id
        aborted += game_abort(game_id=game_id, reason="time_limit")
        _live(game_id, "aborted", league_id)
    logger.warning("match %s: %s games aborted at the time limit", match_id, aborted)
    return aborted


def match_play(
    *, match_id: int, worker: str = "", claim: str = "", from_queue: bool = False
) -> MatchOutcome:
    """Play a match to the end (see the module docstring); safe to call again at any time.

    ``claim`` identifies this run (the task id, which a retry or redelivery of the same task
    keeps); a fresh one is made when it is empty. A game the runner could not finish (a defect of
    ours: bots cannot make it raise) or that ran past the time limit is aborted, so one broken
    game cannot hold up its league. A database error while storing propagates (the task retries
    it); games still in flight are cancelled. A game whose faults are the service's
    (``service_fault``), and every game still in flight when the process begins to stop, is left
    pending and the match released: the outcome says ``released`` and when to send it again.

    ``from_queue``: the run took the match's message from the queue (``tasks.play_match``). Its
    waiting mark is taken off once the begin has committed, not before (``queueing``): until
    then the match reads as pending, and a resume would send it again.
    """
    claim = claim or uuid.uuid4().hex
    try:
        plan = match_begin(match_id=match_id, worker=worker, claim=claim)
    finally:
        if from_queue:
            queueing.match_dequeued(match_id)
    if plan is None:
        if from_queue:
            _send_again_if_resumed(match_id)
        return MatchOutcome(status="skipped")
    futures = {} if stopping else {_games_loop.submit(plan, game): game for game in plan.games}
    stored = aborted = 0
    released: list[int] = []
    deadline = renewed = time.monotonic()
    deadline += match_time_limit()
    pending = set(futures)
    stop = stopping.future
    try:
        while pending and not stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                aborted += _abort_all(pending, futures, match_id, plan.league_id)
                pending = set()
                break
            done, pending = concurrent.futures.wait(
                pending | {stop}, timeout=min(HEARTBEAT_S, left), return_when="FIRST_COMPLETED"
            )
            done.discard(stop)
            pending.discard(stop)
            if time.monotonic() - renewed >= HEARTBEAT_S:
                _renew_lease(match_id, claim)
                renewed = time.monotonic()
            for future in done:
                game = futures[future]
                try:
                    record = future.result()
                except Exception:
                    logger.exception("game %s of match %s failed", game.game_id, match_id)
                    aborted += game_abort(game_id=game.game_id, reason="error")
                    _live(game.game_id, "aborted", plan.league_id)
                    continue
                reason = service_fault(plan, game, record)
                if reason is not None:
                    logger.warning(
                        "game %s of match %s not stored, to be played again: %s",
                        game.game_id, match_id, reason,
                    )  # fmt: skip
                    released.append(game.game_id)
                    _live(game.game_id, "replay")
                    continue
                stored += game_finish(game_id=game.game_id, record=record)
                _live(game.game_id, "finished", plan.league_id)
    finally:
        for future in futures:
            future.cancel()
    unplayed = [futures[f].game_id for f in pending] if futures else plan.games
    for future in pending if futures else ():
        _live(futures[future].game_id, "replay")
    left_over = len(released) + len(unplayed)
    if left_over:
        match_release(match_id=match_id, claim=claim)
        logger.warning("match %s released with %s games to play again", match_id, left_over)
        return MatchOutcome(
            status="released",
            played=len(plan.games),
            stored=stored,
            aborted=aborted,
            released=left_over,
            retry_in_s=RELEASE_RETRY_S * plan.attempts,
            stopping=bool(stopping),
        )
    match_finish(match_id=match_id)
    league_after_set(league_id=plan.league_id)
    if _games_loop.feeds is not None:
        _games_loop.feeds.notify("league", plan.league_id)
    return MatchOutcome(status="played", played=len(plan.games), stored=stored, aborted=aborted)


def league_after_set(*, league_id: int) -> None:
    """What a league does when one of its sets ends: the ladder fills its pool again, a
    version test weighs the evidence, the others finish once no set is left to play."""
    league = League.objects.get(pk=league_id)
    if league.kind == League.Kind.LADDER:
        ladder_after_set(league=league)
    elif league.kind == League.Kind.TEST:
        version_test_update(league_id=league_id)
    else:
        league_finish_if_done(league_id=league_id)


def matches_recover(*, worker: str, since: datetime.datetime | None = None) -> list[int]:
    """Enqueue again what a dead worker left behind; call when a worker starts.

    - Running matches stamped with ``worker`` and begun before ``since`` (when this worker
      started; by the time this runs it may be playing matches of its own) were cut off, and so
      were running matches of any worker whose lease went stale: they are
      released (pending again) and, in running leagues, enqueued at once rather than after the
      broker's visibility timeout. In paused leagues resuming enqueues them with the others.
    - A task the dead worker had received but not yet begun left its match pending and its
      message unacknowledged in the broker, out of sight until that timeout. Which one cannot be
      told, so every pending match of the running leagues this worker played in is enqueued once
      more; the duplicates find their match claimed or finished and return at once.
    """
    stale = timezone.now() - datetime.timedelta(seconds=LEASE_S)
    mine = Q(worker=worker) if since is None else Q(worker=worker, started_at__lt=since)
    unfinished = [League.Status.RUNNING, League.Status.PAUSED]
    with transaction.atomic():
        released = _release(
            Match.objects.filter(
                mine | _lease_older_than(stale),
                status=Match.Status.RUNNING,
                league__status__in=unfinished,
            )
        )
        running = Match.objects.filter(league__status=League.Status.RUNNING)
        leagues = running.filter(worker=worker).values("league_id")
        waiting = list(
            running.filter(status=Match.Status.PENDING, league_id__in=leagues)
            .exclude(id__in=released)
            .order_by("id")
            .values_list("id", flat=True)
        )
        again = [i for i, status in released.items() if status == League.Status.RUNNING]
        ids = again + waiting
        queueing.matches_enqueue_on_commit(ids)
    if released:
        logger.warning("worker %s started: playing %s cut-off matches again", worker, len(released))
    return ids


def matches_sweep(*, idle_s: float = LEASE_S, queued: int | None = None) -> list[int]:
    """Enqueue again the pending matches of running leagues that have gone quiet.

    What a worker restart cannot recover: a Redis that lost its data (restarted without its
    append-only file, or flushed) lost the queued ``play_match`` messages, while the workers, still
    running, never restart. A running league none of whose matches has begun, renewed its lease
    or finished for ``idle_s`` seconds, while the broker's games queue is empty (``queued``, read
    from the broker when not given), is such a case; its pending matches are enqueued once more.
    So are the pending matches of a league that grows (the ladder, a version test) that were
    scheduled ``idle_s`` ago and never begun: such a league never goes quiet while it plays.
    Running matches whose lease went stale are released and enqueued too, wherever they are.
    Duplicates are harmless: a match claimed or finished makes its task return at once.
    """
    if (queueing.games_waiting() if queued is None else queued) > 0:
        return []
    quiet_since = timezone.now() - datetime.timedelta(seconds=idle_s)
    with transaction.atomic():
        running = Match.objects.filter(league__status=League.Status.RUNNING)
        released = list(_release(running.filter(_lease_older_than(quiet_since))))
        active = Match.objects.filter(
            Q(heartbeat_at__gte=quiet_since)
            | Q(started_at__gte=quiet_since)
            | Q(finished_at__gte=quiet_since)
        ).values("league_id")
        # A league that grows (the ladder, a version test) is never quiet while it plays: a set
        # of its scheduled before quiet_since and still pending lost its message.
        lost = Q(league__kind__in=GROWING, created_at__lt=quiet_since)
        quiet = list(
            running.filter(status=Match.Status.PENDING)
            .filter(~Q(league_id__in=active) | lost)
            .exclude(id__in=released)
            .order_by("id")
            .values_list("id", flat=True)
        )
        # A released match is enqueued even in a league still busy with others: nothing else
        # would send it again.
        ids = sorted(released + quiet)
        queueing.matches_enqueue_on_commit(ids)
    if ids:
        logger.warning("sweep: %s pending matches of quiet leagues enqueued again", len(ids))
    return ids
