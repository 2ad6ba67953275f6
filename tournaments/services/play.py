"""A person's seat: a person plays bots through the API (or its page), refereed like any game.

The person's seat is a seat like a bot's: the same engine, the same `games.referee.Referee`,
the same escoba/1 move request for that seat (nothing more), the same log. Only the transport
differs: the person reads the request (``play_read``) and posts the answer (``play_move``);
the bots are called by the ``play.advance`` task (games queue) with the arena's caller.

State: nothing of the engine is stored while the game is played, only every move request's
answer in order (``PersonGame.answers``). The same seed and the same answers referee the same
game, so each step rebuilds the referee from them (``_replay``) in whatever process runs it, and
a restart of any worker or web process loses nothing. A process keeps the referees of the games
it stepped last and goes on from one when the stored answers extend the ones it applied
(tournaments/services/play_referee.py), so a step judges only the answers new to it. Each step
locks the ``PersonGame`` row; a bot is called outside the lock, and its answer is kept only if
nobody else advanced the game meanwhile (two deliveries of the same task call a bot twice at
worst, never play twice).

The clock: the person has ``ESCOBA_PLAY_CLOCK_S`` per move. When it runs out (noticed by the
next read or move, or by the ``play.clocks`` beat task) the referee judges a ``timeout`` fault
for them: the fault policy's fallback move is played, and past ``max_faults`` they forfeit.

Never rated: the game's league (kind ``play``, one per game) is unrated and finished from the
start, so no scheduler, sweep or recovery ever touches it; the finished game is stored with its
log and its bots' seats (their figures) but enters no rating, no-show count or head-to-head.
"""

from __future__ import annotations

import datetime
import logging
import secrets
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from games.engine import EscobaError, Move, Ruleset
from games.faults import Fault, FaultKind
from games.referee import Answer, Referee
from games.scheduling import table_options
from games.wire import move_request
from tournaments import queueing
from tournaments.bot_calls.caller import Caller, run_sync
from tournaments.bot_calls.runner import GameRecord, PlayCall
from tournaments.live_feed import live_game_key, live_topic_key
from tournaments.models import Bot, Game, GameLog, League, Match, PersonGame, Seat
from tournaments.read_cache import game_scopes, reads_changed
from tournaments.selectors import play as play_selectors
from tournaments.services import play_referee
from tournaments.services.game_results import SEAT_FIGURES, game_log_url, seat_stats
from tournaments.services.tallies import league_tally_add

logger = logging.getLogger(__name__)

ERROR_UNKNOWN_BOT = "No bot with this id."
ERROR_NOT_ACCEPTING = "Bot {name} does not accept challenges, and it is not yours."
ERROR_PAUSED = "Bot {name} is paused by its owner."
ERROR_PLAYERS = "players must be 2 (you and one bot) or 4 (you and a partner against two bots)."
ERROR_PARTNERS = "A table of 4 needs a partner and two opponents: partner and opponents."
ERROR_TWO_ONLY = "partner and opponents are for tables of 4; a table of 2 has one opponent."
ERROR_RULESET = "Unknown ruleset {name}."
ERROR_TOO_MANY = "You already have {limit} games in play; finish one first."
ERROR_ILLEGAL = "That move is not legal here; choose one of legal_moves and play again."
ERROR_BAD_MOVE = "A move is a card from your hand and the cards it captures: {problem}"
ERROR_NOT_YOUR_TURN = "It is not your turn."
ERROR_FINISHED = "This game is over."

# The one run of a person's game on its live feed (tournaments/live_feed.py): it is never replayed.
LIVE_RUN = "person"


class NotYourTurn(Exception):
    """A move was posted while the person is not to move (409)."""


@dataclass(frozen=True)
class PlayState:
    """A person's game as its API shows it: ``request`` only on the person's turn."""

    person_game: PersonGame
    status: str
    request: dict[str, Any] | None
    view: dict[str, Any] | None
    clock_ms: int | None


def clock_s() -> int:
    return int(settings.ESCOBA_PLAY_CLOCK_S)


def stall_s() -> float:
    """Seconds after which a bots' turn with no answer stored is sent to the queue again: a
    worker that died while calling the bot left its ``play.advance`` message unacknowledged,
    out of sight until the broker's visibility timeout."""
    return settings.ESCOBA_PLAY_STALL_S + 3 * settings.ESCOBA_PLAY_BOT_TIMEOUT_MS / 1000


def play_state_body(state: PlayState) -> dict[str, Any]:
    """The state as the API and the page show it (``/api/play/{id}/``)."""
    person_game = state.person_game
    game = person_game.game
    finished = state.status == "finished"
    result = None
    if finished:
        result = {"winner": game.winner, "totals": game.totals, "reason": game.reason,
                  "forfeit": game.forfeit}  # fmt: skip
    return {
        "id": person_game.id,
        "game": game.id,
        "status": state.status,
        "seat": person_game.seat,
        "team": person_game.team,
        "players": len(game.seating),
        "seat_names": person_game.seat_names,
        "request": state.request,
        "view": state.view,
        "clock_ms": state.clock_ms,
        "clock_s": clock_s(),
        "moves": len(person_game.answers),
        "result": result,
        "replay_url": reverse("game_replay", args=[game.id]) if finished else None,
        "page_url": reverse("play", args=[person_game.id]),
    }


# --- creating ------------------------------------------------------------------------------------


def _bot(field: str, bot_id: int, person: Any) -> Bot:
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise ValidationError({field: [ERROR_UNKNOWN_BOT]})
    if bot.owner_id != person.pk and not bot.accepts_challenges:
        raise ValidationError({field: [ERROR_NOT_ACCEPTING.format(name=bot.name)]})
    if bot.status != Bot.Status.ACTIVE:
        raise ValidationError({field: [ERROR_PAUSED.format(name=bot.name)]})
    return bot


def _seating(
    *, person: Any, players: int, opponent: int | None, partner: int | None,
    opponents: list[int] | None,
) -> tuple[int, list[Bot | None]]:  # fmt: skip
    """The person's seat (drawn at random: who deals first is the seed's) and the bot by seat."""
    seat = secrets.randbelow(players)
    seating: list[Bot | None] = [None] * players
    if players == 2:
        if partner is not None or opponents:
            raise ValidationError({"players": [ERROR_TWO_ONLY]})
        if opponent is None:
            raise ValidationError({"opponent": ["This field is required."]})
        seating[1 - seat] = _bot("opponent", opponent, person)
        return seat, seating
    if players != 4:
        raise ValidationError({"players": [ERROR_PLAYERS]})
    if partner is None or opponents is None or len(opponents) != 2:
        raise ValidationError({"opponents": [ERROR_PARTNERS]})
    seating[(seat + 2) % 4] = _bot("partner", partner, person)
    seating[(seat + 1) % 4] = _bot("opponents", opponents[0], person)
    seating[(seat + 3) % 4] = _bot("opponents", opponents[1], person)
    return seat, seating


@transaction.atomic
def play_create(
    *,
    person: Any,
    ruleset_name: str = "classic",
    players: int = 2,
    opponent: int | None = None,
    partner: int | None = None,
    opponents: list[int] | None = None,
) -> PersonGame:
    """Seat ``person`` with bots at a new unrated game and start it.

    A 2-player game against ``opponent``; at a table of 4, with ``partner`` against the two
    ``opponents``. Any bot that accepts challenges, or one of the person's own. At most
    ``ESCOBA_PLAY_MAX_GAMES`` of a person's games are in play at once.
    """
    limit = settings.ESCOBA_PLAY_MAX_GAMES
    playing = PersonGame.objects.filter(person=person, status=PersonGame.Status.PLAYING)
    if playing.count() >= limit:
        raise ValidationError({"opponent": [ERROR_TOO_MANY.format(limit=limit)]})
    seat, seating = _seating(person=person, players=players, opponent=opponent, partner=partner,
                             opponents=opponents)  # fmt: skip
    try:
        ruleset = Ruleset.from_preset(ruleset_name, table_options(players))
    except (EscobaError, KeyError, ValueError):
        raise ValidationError({"ruleset": [ERROR_RULESET.format(name=ruleset_name)]}) from None
    now = timezone.now()
    names = [person.username if bot is None else bot.name for bot in seating]
    league = League.objects.create(
        name=f"Play {secrets.token_hex(6)}: {' v '.join(names)}"[:100],
        creator=person,
        ruleset=ruleset.to_dict(),
        pool=f"{ruleset.name}/{players}p",
        players=players,
        games_per_pairing=1,
        move_timeout_ms=settings.ESCOBA_PLAY_BOT_TIMEOUT_MS,
        rated=False,
        kind=League.Kind.PLAY,
        seed=secrets.randbits(63),
        # Finished from the start: nothing schedules, sweeps or recovers its one match.
        status=League.Status.FINISHED,
        started_at=now,
    )
    match = Match.objects.create(
        league=league, number=1, round=1, seed=league.seed, status=Match.Status.RUNNING,
        started_at=now, attempts=1,
    )  # fmt: skip
    match.bots.set({bot.id for bot in seating if bot is not None})
    game = Game.objects.create(
        league=league, match=match, number=1, seed=league.seed, started_at=now,
        seating=[None if bot is None else bot.id for bot in seating],
    )  # fmt: skip
    Seat.objects.bulk_create(
        Seat(game=game, seat=index, team=ruleset.team_of(index), bot=bot)
        for index, bot in enumerate(seating)
        if bot is not None
    )
    person_game = PersonGame.objects.create(
        person=person, game=game, seat=seat, team=ruleset.team_of(seat), seat_names=names
    )
    league_tally_add(league_id=league.id, games=1)  # the games lists' count
    transaction.on_commit(lambda: _live_start(game.id))
    referee, _ = _replay(person_game)
    _to_move(person_game, referee)
    person_game.save()
    return person_game


# --- refereeing ----------------------------------------------------------------------------------


def _replay(person_game: PersonGame) -> tuple[Referee, list[PlayCall]]:
    """The referee as it stands after the stored answers (see the module docstring), and the
    call each answer made (without its request)."""
    return play_referee.referee_after(person_game)


def _stored(answer: Answer, seat: int) -> dict[str, Any]:
    fault = answer.fault
    return {
        "seat": seat,
        "move": None if answer.move is None else answer.move.to_str(),
        "fault": None if fault is None else str(fault.kind),
        "detail": None if fault is None else fault.detail,
        "latency_ms": answer.latency_ms,
        "debug": None if answer.debug is None else answer.debug.text,
        "debug_truncated": answer.debug is not None and answer.debug.truncated,
    }


def _locked(person_game_id: int) -> PersonGame:
    return (
        PersonGame.objects.select_for_update(of=("self",))
        .select_related("game__league", "person")
        .get(pk=person_game_id)
    )


def _record(person_game: PersonGame, answer: Answer, seat: int) -> tuple[Referee, list[PlayCall]]:
    """Add one answer, replay, and publish the play it made; the game is stored when over."""
    person_game.answers.append(_stored(answer, seat))
    person_game.person_to_move = False
    person_game.turn_started_at = None
    referee, calls = _replay(person_game)
    feed = _feed(calls)
    transaction.on_commit(lambda: _publish(person_game.game_id, person_game.id, feed))
    if referee.is_over:
        _finish(person_game, *play_referee.replayed_from_seed(person_game))
    else:
        _to_move(person_game, referee)
    person_game.save()
    return referee, calls


def _to_move(person_game: PersonGame, referee: Referee) -> None:
    """Start the person's clock when the game came to them; else the bots play on."""
    if referee.turn().seat == person_game.seat:
        if not person_game.person_to_move:
            person_game.person_to_move = True
            person_game.turn_started_at = timezone.now()
    else:
        _advance_on_commit(person_game.id)


def _finish(person_game: PersonGame, referee: Referee, calls: list[PlayCall]) -> None:
    """Store the game as every game is stored (its row, log and bots' seat figures), unrated:
    no rating, no-show count or head-to-head total takes it in."""
    record = GameRecord(log=referee.game.log(), calls=calls)
    game = person_game.game
    result = record.log["result"]
    now = timezone.now()
    game.status = Game.Status.FINISHED
    game.winner = result["winner"]
    game.totals = result["totals"]
    game.reason = result["reason"]
    game.forfeit = result["forfeit_seat"]
    game.moves = len(record.plays)
    game.faults = len(record.faults)
    game.finished_at = now
    game.save()
    GameLog.objects.create(
        game=game, document=record.log, diagnostics=record.diagnostics, faults=record.faults
    )
    league_tally_add(league_id=game.league_id, finished=1, faults=game.faults)
    stats = seat_stats(record)
    for seat in game.seats.all():
        values = {name: stats.get(seat.seat, {}).get(name, getattr(seat, name))
                  for name in SEAT_FIGURES}  # fmt: skip
        Seat.objects.filter(pk=seat.pk).update(finished_at=now, **values)
    Match.objects.filter(pk=game.match_id).update(status=Match.Status.FINISHED, finished_at=now)
    League.objects.filter(pk=game.league_id).update(finished_at=now)
    person_game.status = PersonGame.Status.FINISHED
    person_game.finished_at = now
    # "ratings": the rankings show each bot's record against people.
    bot_ids = [b for b in game.seating if b]
    reads_changed(*game_scopes(game.id, game.league_id, bot_ids), "ratings")
    notices = referee.end_notices(game_log_url(game.id))
    feed = _feed(calls, end=True)
    transaction.on_commit(lambda: _end(person_game.id, game.id, notices, feed))


# --- what the person does ------------------------------------------------------------------------


def _clock_check(person_game: PersonGame, now: datetime.datetime) -> bool:
    """Judge a ``timeout`` for the person when their clock ran out (the lock is held)."""
    if person_game.status != PersonGame.Status.PLAYING or not person_game.person_to_move:
        return False
    started = person_game.turn_started_at
    if started is None or now < started + datetime.timedelta(seconds=clock_s()):
        return False
    fault = Fault(FaultKind.TIMEOUT, f"no move within the {clock_s()} s clock")
    _record(person_game, Answer(fault=fault, latency_ms=clock_s() * 1000.0), person_game.seat)
    return True


def play_find(*, person_game_id: int, person: Any) -> PersonGame | None:
    """The person's own game, or None (anyone else's games do not exist for them)."""
    return play_selectors.person_game_of(person_game_id=person_game_id, person=person)


@transaction.atomic
def play_read(*, person_game_id: int, person: Any) -> PlayState | None:
    """The game as its person sees it; None when it is not theirs. A read is also where a
    clock that ran out is noticed, so it may write (the fallback move)."""
    if play_find(person_game_id=person_game_id, person=person) is None:
        return None
    person_game = _locked(person_game_id)
    now = timezone.now()
    _clock_check(person_game, now)
    if person_game.status == PersonGame.Status.FINISHED:
        return PlayState(person_game, "finished", None, None, None)
    referee, _ = _replay(person_game)
    turn = referee.turn()
    view = _seat_view(referee, person_game.seat)
    if turn.seat != person_game.seat or not person_game.person_to_move:
        if (now - person_game.updated_at).total_seconds() > stall_s():
            _advance_on_commit(person_game.id)  # idempotent: a stalled bots' turn goes on
        return PlayState(person_game, "waiting", None, view, None)
    deadline = person_game.turn_started_at + datetime.timedelta(seconds=clock_s())
    left = max(0, int((deadline - now).total_seconds() * 1000))
    return PlayState(person_game, "your_turn", turn.request, turn.request, left)


def _seat_view(referee: Referee, seat: int) -> dict[str, Any]:
    """What the person's seat sees now, in the move request's form (its ``legal_moves`` empty
    while another seat is to move): the page draws the table from it between turns."""
    turn = referee.turn()
    if turn.seat == seat:
        return turn.request
    return move_request(referee.game.view(seat), seat_names=referee.seat_names, latency_ms=None,
                        time_bank_ms=referee.timeout_ms, game_id=turn.request["game"]["id"],
                        timeout_ms=referee.timeout_ms)  # fmt: skip


def _parse(card: Any, capture: Any) -> Move:
    try:
        return Move.from_wire({"card": card, "capture": [] if capture is None else capture})
    except EscobaError as error:
        raise ValidationError({"card": [ERROR_BAD_MOVE.format(problem=error)]}) from None


def _key(move: Move) -> tuple[str, frozenset[str]]:
    wire = move.to_wire()
    return wire["card"], frozenset(wire["capture"])


def play_move(*, person_game_id: int, person: Any, card: Any, capture: Any) -> PersonGame:
    """The person's move. An illegal move changes nothing (``ValidationError``: play again);
    ``NotYourTurn`` when it is a bot's turn or the game is over; ``PersonGame.DoesNotExist``
    when the game is not theirs. A move that comes after the clock ran out is refused, and the
    fallback move the clock played stays played: it is committed before the refusal is raised."""
    with transaction.atomic():
        if play_find(person_game_id=person_game_id, person=person) is None:
            raise PersonGame.DoesNotExist
        person_game = _locked(person_game_id)
        now = timezone.now()
        late = _clock_check(person_game, now)
        if late:
            person_game.save()
        else:
            _move_record(person_game, now, card, capture)
    if late:
        raise NotYourTurn(ERROR_NOT_YOUR_TURN)
    return person_game


def _move_record(person_game: PersonGame, now: datetime.datetime, card: Any, capture: Any) -> None:
    """Check and record the person's move on their locked game (inside ``play_move``'s
    transaction): every refusal here raises before anything is written."""
    if person_game.status == PersonGame.Status.FINISHED:
        raise NotYourTurn(ERROR_FINISHED)
    if not person_game.person_to_move:
        raise NotYourTurn(ERROR_NOT_YOUR_TURN)
    move = _parse(card, capture)
    referee, _ = _replay(person_game)
    turn = referee.turn()
    legal = {_key(m): m for m in turn.view.legal_moves}
    if _key(move) not in legal:
        raise ValidationError({"card": [ERROR_ILLEGAL]})
    latency = (now - person_game.turn_started_at).total_seconds() * 1000.0
    _record(person_game, Answer(move=legal[_key(move)], latency_ms=latency), turn.seat)


def play_clocks_enforce() -> list[int]:
    """Beat: play the fallback move for every person whose clock ran out (one transaction
    each), and send the stalled bots' turns to the queue again (``stall_s``). Returns the games
    it moved."""
    cut = timezone.now() - datetime.timedelta(seconds=clock_s())
    ids = list(
        PersonGame.objects.filter(
            Q(status=PersonGame.Status.PLAYING, person_to_move=True, turn_started_at__lte=cut)
        ).values_list("id", flat=True)
    )
    stalled = PersonGame.objects.filter(
        status=PersonGame.Status.PLAYING,
        person_to_move=False,
        updated_at__lte=timezone.now() - datetime.timedelta(seconds=stall_s()),
    ).values_list("id", flat=True)
    for person_game_id in stalled:
        queueing.play_advance_enqueue(person_game_id)
    moved = []
    for person_game_id in ids:
        with transaction.atomic():
            person_game = _locked(person_game_id)
            if _clock_check(person_game, timezone.now()):
                person_game.save()
                moved.append(person_game_id)
    return moved


# --- the bots' turns -----------------------------------------------------------------------------


def _advance_on_commit(person_game_id: int) -> None:
    def send() -> None:
        try:
            queueing.play_advance_enqueue(person_game_id)
        except queueing.BROKER_ERRORS:
            logger.warning("person game %s: the games queue failed", person_game_id, exc_info=True)

    transaction.on_commit(send)


async def _ask(url: str, secret: str, body: dict[str, Any], timeout_ms: int) -> Answer:
    async with Caller(allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS) as caller:
        reply = await caller.client(url, secret).move(body, timeout_ms)
    return Answer(reply.move, reply.fault, reply.latency_ms, reply.debug)


async def _notify(bots: list[tuple[str, str, dict[str, Any]]], name: str, timeout_ms: int) -> None:
    async with Caller(allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS) as caller:
        for url, secret, body in bots:
            await caller.client(url, secret).post(name, body, timeout_ms)


def _bot_notices(person_game: PersonGame, notices: list[dict[str, Any]]) -> list[tuple]:
    seating = person_game.game.seating
    bots = {b.id: b for b in Bot.objects.filter(id__in=[b for b in seating if b])}
    return [(bots[b].url, bots[b].secret, notices[seat])
            for seat, b in enumerate(seating) if b is not None]  # fmt: skip


def play_advance(*, person_game_id: int) -> str:
    """Let the bots play until it is the person's turn or the game is over; safe to run again
    at any time (the task of the games queue). Returns what it left: ``your_turn``,
    ``finished`` or ``gone``."""
    while True:
        with transaction.atomic():
            person_game = PersonGame.objects.filter(pk=person_game_id).first()
            if person_game is None:
                return "gone"
            person_game = _locked(person_game_id)
            if person_game.status == PersonGame.Status.FINISHED:
                return "finished"
            referee, _ = _replay(person_game)
            turn = referee.turn()
            if turn.seat == person_game.seat:
                _to_move(person_game, referee)
                person_game.save()
                return "your_turn"
            bot = Bot.objects.get(pk=person_game.game.seating[turn.seat])
            known = len(person_game.answers)
            timeout_ms = referee.timeout_ms
            # Before the bots' first move request, whoever moved first: their start notices.
            bots_answered = any(a["seat"] != person_game.seat for a in person_game.answers)
            starts = None if bots_answered else referee.start_notices()
        if starts is not None:
            run_sync(_notify, _bot_notices(person_game, starts), "start", timeout_ms)
        answer = run_sync(_ask, bot.url, bot.secret, turn.request, timeout_ms)
        with transaction.atomic():
            person_game = _locked(person_game_id)
            if len(person_game.answers) != known:
                continue  # another run advanced it meanwhile: its answer stands
            _record(person_game, answer, turn.seat)
            if person_game.status == PersonGame.Status.FINISHED:
                return "finished"


# --- live ----------------------------------------------------------------------------------------


_live_failing = False


def _set_failing(value: bool) -> None:
    global _live_failing
    _live_failing = value


def _redis() -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT_S,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT_S,
    )


# Appends the entries the feed lacks: ARGV[2..] are the game's entries from n = 0, each pushed
# (and published to the feed's followers) when the feed holds exactly n entries, so a feed that
# missed an entry (a worker killed between storing an answer and publishing its play, a Redis
# restart) is filled in order by the next publication, and two processes publishing the same
# entries never append one twice.
_FEED_APPEND = """
local have = redis.call('LLEN', KEYS[1])
for i = have + 2, #ARGV do
  redis.call('RPUSH', KEYS[1], ARGV[i])
  redis.call('PUBLISH', KEYS[1], ARGV[i])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], 'changed')
"""


def _feed(calls: list[PlayCall], *, end: bool = False) -> list[bytes]:
    """The live feed's entries for the game so far, entry ``n`` at index ``n``: the start, one
    play (or forfeit) per call, and the end once the game is over."""
    entries: list[dict[str, Any]] = [{"kind": "start"}]
    for call in calls:
        if call.move is None:
            entries.append({"kind": "forfeit", "seat": call.seat})
        else:
            fault = None if call.fault is None else str(call.fault.kind)
            entries.append(
                {"kind": "play", "seat": call.seat, "move": call.move.to_str(), "fault": fault}
            )
    if end:
        entries.append({"kind": "end", "status": "finished"})
    return [orjson.dumps({"run": LIVE_RUN, "n": n, **entry}) for n, entry in enumerate(entries)]


def _publish(game_id: int, person_game_id: int, feed: list[bytes], *, fresh: bool = False) -> None:
    """Bring the game's live feed (what spectators and the person's page follow) up to ``feed``
    and tell the person's page it changed; ``fresh`` starts the feed over. A Redis outage drops
    the entries (the stored state stays the truth; the next publication fills them in)."""
    key = live_game_key(game_id)
    try:
        with _redis() as client:
            if fresh:
                client.delete(key)
            client.eval(_FEED_APPEND, 2, key, live_topic_key("play", person_game_id),
                        settings.ESCOBA_LIVE_TTL_S, *feed)  # fmt: skip
    except (redis.RedisError, OSError) as error:
        # Once per outage in the log, as the worker's live feeds do.
        log = logger.info if _live_failing else logger.warning
        log("person game %s: live entries dropped (%s)", person_game_id, error)
        _set_failing(True)
    else:
        _set_failing(False)


def _live_start(game_id: int) -> None:
    person_game_id = PersonGame.objects.filter(game_id=game_id).values_list("id", flat=True)[0]
    _publish(game_id, person_game_id, _feed([]), fresh=True)


def _end(
    person_game_id: int, game_id: int, notices: list[dict[str, Any]], feed: list[bytes]
) -> None:
    person_game = PersonGame.objects.select_related("game__league").get(pk=person_game_id)
    _publish(game_id, person_game_id, feed)
    try:
        run_sync(_notify, _bot_notices(person_game, notices), "end",
                 person_game.game.league.move_timeout_ms)  # fmt: skip
    except Exception:  # courtesy calls: a bot that fails them loses nothing, nor do we
        logger.info("person game %s: end notices failed", person_game_id, exc_info=True)
