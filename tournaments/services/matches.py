"""Playing a match: load and lock it, play its unfinished games, store each result as it comes.

A match run, in a worker thread (the Celery task ``leagues.play_match``), hands its games to the
process's game loop (``tournaments.bot_calls.game_loop``: one event loop thread and one caller
shared by every game of the process) and stores each finished game from its own thread, where
the Django ORM may be used (``services.game_results``). While it plays, it holds the match's
lease (``services.match_leases``).

Restarts: nothing of a game is written until it is over, and then its result, seats and no-shows
are written in one transaction that first locks the game row and returns if the game is
already finished. So a match whose worker died restarts by playing its unfinished games again,
each on a fresh deal (``match_begin``), finished games stay as they were, and no game is stored
or rated twice even when two deliveries of the same task overlap.

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

import concurrent.futures
import logging
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

from games.engine import Ruleset
from games.faults import FaultKind
from tournaments import observers, queueing
from tournaments.bot_calls.caller import Caller
from tournaments.bot_calls.game_loop import GameLoop, stopping
from tournaments.bot_calls.runner import BotEndpoint, GameRecord, PlayCall, play_game
from tournaments.live_feed import LiveFeeds
from tournaments.models import Bot, Game, League, Match
from tournaments.read_cache import reads_changed
from tournaments.selectors.fixed import fixed_instances, fixed_rows, model_columns
from tournaments.services.bot_versions import match_versions_record
from tournaments.services.game_results import game_abort, game_finish, game_log_url
from tournaments.services.ladder import ladder_after_set
from tournaments.services.league_states import league_finish_if_done
from tournaments.services.match_leases import HEARTBEAT_S, lease_alive, lease_renew, match_release
from tournaments.services.rated_sets import rated_set_record
from tournaments.services.tallies import SET_GAME_FIELDS, rows_update, tallies_set_finished
from tournaments.services.version_tests import version_test_update

logger = logging.getLogger(__name__)

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


def bot_caller() -> Caller:
    """The process's bot caller, under the address policy of the moment (setting
    ``ESCOBA_ALLOW_PRIVATE_BOT_URLS``)."""
    return Caller(allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS)


# This process's games, and the live feeds that tell viewers about them (tournaments/live_feed.py).
games_loop: GameLoop[LiveFeeds] = GameLoop(make_caller=bot_caller, make_feeds=LiveFeeds)


def game_submit(plan: MatchPlan, game: GamePlan) -> concurrent.futures.Future[GameRecord]:
    """Play one game of the plan on the process's game loop; its viewers follow it live."""

    def play(caller: Caller, feeds: LiveFeeds):
        game_id = game.game_id

        def on_play(call: PlayCall) -> None:
            if call.move is None:
                feeds.forfeit(game_id, seat=call.seat)
            else:
                fault = None if call.fault is None else str(call.fault.kind)
                feeds.play(game_id, seat=call.seat, move=call.move.to_str(), fault=fault)

        feeds.start(game_id)
        return play_game(
            ruleset=plan.ruleset,
            seed=game.seed,
            bots=game.bots,
            game_id=game_id,
            timeout_ms=plan.timeout_ms,
            caller=caller,
            anonymous=plan.anonymous,
            max_faults=plan.max_faults,
            log_url=game_log_url(game_id),
            on_play=on_play,
        )

    return games_loop.submit(play)


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


# The fixed statements (``fixed_rows``) a begin reads its rows with: Django's reads of model
# instances cost the league worker more CPU than their statements (docs/benchmarks-journal.md,
# "Storing a game (2)"). Each reads every field, as a model instance has them.


def _instance(model: type[Model], build: Callable[[int], QuerySet], key: int) -> Model:
    """The row of ``build(key)`` as a ``model`` instance, as ``get`` gives it."""
    found = fixed_instances(model, build, key, model_columns(model))
    if not found:
        raise model.DoesNotExist(f"no {model._meta.model_name} {key}")
    return found[0]


def _league(league_id: int) -> QuerySet:
    return League.objects.filter(pk=league_id).order_by().values_list(*model_columns(League))


def _league_locked(league_id: int) -> QuerySet:
    return _league(league_id).select_for_update(no_key=True)  # see league_lock


def _match_locked(match_id: int) -> QuerySet:
    rows = Match.objects.select_for_update().filter(pk=match_id).order_by()
    return rows.values_list(*model_columns(Match))


def _pending(match_id: int) -> QuerySet:
    """The match's games still to play, in their order."""
    games = Game.objects.filter(match_id=match_id, status=Game.Status.PENDING).order_by("number")
    return games.values_list(*model_columns(Game))


def _league_of_match(match_id: int) -> QuerySet:
    """The match's league and its kind: a fixed statement (``fixed_rows``)."""
    return Match.objects.filter(pk=match_id).order_by().values_list("league_id", "league__kind")


@transaction.atomic
def match_begin(*, match_id: int, worker: str = "", claim: str = "") -> MatchPlan | None:
    """Lock the match and say which games to play, or None when there is nothing to do.

    A finished or cancelled match, or one whose league is not running (paused: resuming enqueues
    it again), is left alone; so is a match another live run holds (``services.match_leases``).
    Otherwise this run claims the match and its unfinished games, all of them pending because
    nothing of a game is stored before its end, are planned afresh.
    """
    # The league first, as every change of a league locks it (``league_lock``): a pause that
    # has committed is seen, and no match of a paused league starts. Not the ladder's, which no
    # one pauses and whose fill skips a locked row (``services.ladder``): its matches would
    # make the fills skip.
    found = fixed_rows(_league_of_match, match_id)
    if not found:
        raise Match.DoesNotExist(f"no match {match_id}")
    [(league_id, kind)] = found
    league = _instance(League, _league if kind == League.Kind.LADDER else _league_locked, league_id)
    match = _instance(Match, _match_locked, match_id)
    match.league = league  # the row just read (and locked), not read again where the match's used
    now = timezone.now()
    if match.status in (Match.Status.FINISHED, Match.Status.CANCELLED):
        return None
    if league.status == League.Status.CANCELLED:
        match.status = Match.Status.CANCELLED
        rows_update(rows=[match], fields=["status"])
        return None
    if league.status != League.Status.RUNNING:
        return None
    if match.status == Match.Status.RUNNING and match.claim != claim and lease_alive(match, now):
        return None
    match.status = Match.Status.RUNNING
    match.attempts += 1
    match.started_at = now
    match.worker = worker
    match.claim = claim
    match.heartbeat_at = now
    # The match's bots, read once: a rated set is their versions' of this moment, and its games
    # call them at their addresses of this moment.
    bots = {bot.id: bot for bot in Bot.objects.filter(matches=match)}
    noted = match_versions_record(match=match, bots=list(bots.values()))
    rows_update(
        rows=[match],
        fields=[
            "status", "attempts", "started_at", "worker", "claim", "heartbeat_at",
            *(["versions"] if noted else []),
        ],
    )  # fmt: skip
    games = fixed_instances(Game, _pending, match_id, model_columns(Game))
    # A game that began before (a run that died, stopped or was released for our own fault) is
    # dealt afresh: its bots may have seen its cards, and a bot must never play a deal it knows.
    replayed = [game for game in games if game.started_at is not None]
    for game in replayed:
        game.seed = secrets.randbits(63)
    Game.objects.bulk_update(replayed, ["seed"])
    seated = {bot_id for game in games for bot_id in game.seating} - bots.keys()
    if seated:  # a match written without its bots' rows (the schedules write them)
        bots.update(Bot.objects.in_bulk(seated))
    endpoints = {
        bot.id: BotEndpoint(url=bot.url, secret=bot.secret, name=bot.name) for bot in bots.values()
    }
    for game in games:
        game.started_at = match.started_at
    rows_update(rows=games, fields=["started_at"])
    reads_changed(f"league:{league.id}", "games", *(f"game:{g.id}" for g in games))
    return MatchPlan(
        match_id=match.id,
        league_id=league.id,
        ruleset=Ruleset.from_dict(league.ruleset),
        timeout_ms=league.move_timeout_ms,
        max_faults=league.max_faults,
        games=[
            GamePlan(
                game_id=g.id, seed=g.seed, bots=[endpoints[b] for b in g.seating], seating=g.seating
            )
            for g in games
        ],
        attempts=match.attempts,
        anonymous=observers.league_plays_anonymously(league),
    )


def _match_to_finish(match_id: int) -> QuerySet:
    """The match, locked, with what finishing it reads of it and its league: a fixed statement
    (``fixed_rows``). The match row only is locked (``of``), as every change of a match does."""
    return (
        Match.objects.select_for_update(of=("self",))
        .filter(pk=match_id)
        .order_by()
        .values_list(
            "status", "league_id", "versions", "league__rated", "league__pool", "league__ruleset"
        )
    )


# ``SET_GAME_FIELDS`` in the model's order of fields, as ``Model.from_db`` takes them.
SET_GAME_COLUMNS = model_columns(Game, SET_GAME_FIELDS)


def _set_games(match_id: int) -> QuerySet:
    """The match's games in their order, with ``SET_GAME_FIELDS``: a fixed statement."""
    return Game.objects.filter(match_id=match_id).order_by("number").values_list(*SET_GAME_COLUMNS)


@transaction.atomic
def match_finish(*, match_id: int) -> bool:
    """Mark the match finished once none of its games is pending; a rated league's finished
    match is recorded as a rated set of its pool in the same transaction."""
    found = fixed_rows(_match_to_finish, match_id)
    if not found:
        raise Match.DoesNotExist(f"no match {match_id}")
    [(status, league_id, versions, rated, pool, ruleset)] = found
    if status != Match.Status.RUNNING:
        return False
    # Read once, used thrice (the pending check, the rated set, the standings' sets).
    games = fixed_instances(Game, _set_games, match_id, SET_GAME_COLUMNS)
    if any(game.status == Game.Status.PENDING for game in games):
        return False
    league = League(id=league_id, rated=rated, pool=pool, ruleset=ruleset)
    match = Match(id=match_id, league=league, versions=versions)
    match.status = Match.Status.FINISHED
    match.finished_at = timezone.now()
    rows_update(rows=[match], fields=("status", "finished_at"))
    rated_set_record(match=match, games=games)
    tallies_set_finished(match=match, games=games)
    reads_changed(f"league:{match.league_id}", "games", *(f"game:{game.id}" for game in games))
    return True


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
    changed (tournaments/live_feed.py); nothing when this process played no game."""
    feeds = games_loop.feeds
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
    futures = {} if stopping else {game_submit(plan, game): game for game in plan.games}
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
                lease_renew(match_id=match_id, claim=claim)
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
    if games_loop.feeds is not None:
        games_loop.feeds.notify("league", plan.league_id)
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
