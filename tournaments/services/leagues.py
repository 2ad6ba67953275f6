"""Creating leagues, enrolling bots, and moving a league through its life.

open → running ⇄ paused → finished, and cancelled from any unfinished state. Starting a league
checks it (and the user's quotas, ``services.quotas``), marks it running with the number of
games its schedule will hold (``games_planned``), and leaves the writing to a task: the
schedule is written in batches of ``ESCOBA_SCHEDULE_BATCH_MATCHES`` matches
(``league_schedule_next``), each batch in its own transaction and sent to the workers once it
commits, so a start answers at once however large the league. The league finishes when its
whole schedule is written and its last match has been played.

Pausing stops matches from starting (``services.matches.match_begin`` reads the league's status
under its lock); resuming sends again only the matches that wait with no message in the queue
(``queueing.matches_requeue_on_commit``), so pausing and resuming any number of times leaves at
most one message per waiting match.

Starting or resuming a league needs the match queue (Redis). When it is unreachable the service
raises ``QueueUnavailable`` and changes nothing (the API answers 503), rather than start a league
whose matches cannot be sent. Should the queue fail between that check and the commit, the league
stays started and the beat sweep (``services.matches.matches_sweep``) sends its matches once the
queue is back.
"""

from __future__ import annotations

import datetime
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from games.engine import Ruleset, RulesetError
from games.scheduling import (
    ERROR_TOO_FEW_BOTS,
    ERROR_TOO_FEW_OWNERS,
    INDIVIDUAL_TABLE,
    TABLE_SIZES,
    ScheduledMatch,
    build_individual_schedule,
    build_schedule,
    deals_shared,
    duplicate_seatings,
    individual_seatings,
    individual_tables,
    match_seed,
    minimum_bots,
    schedule_errors,
    schedule_games,
    set_length,
    set_seeds,
    table_options,
)
from tournaments import queueing
from tournaments.bot_calls.faults import DEFAULT_MAX_FAULTS
from tournaments.models import Bot, Game, League, LeagueEntry, Match, Seat
from tournaments.read_cache import reads_changed
from tournaments.selectors import bots_schedulable
from tournaments.services.quotas import league_limits_check, league_start_quota_check
from tournaments.services.ratings import (
    may_create_rated,
    rated_entry_errors,
    rated_league_check,
    rated_move_timeout_ms,
)
from tournaments.services.tallies import league_tally_add

logger = logging.getLogger(__name__)

ERROR_NOT_CREATOR = "Only the league's creator may do this."
ERROR_NOT_BOT_OWNER = "You may enrol only your own bots."
ERROR_NOT_OPEN = "Bots may be enrolled only while the league is open."
ERROR_ALREADY_ENTERED = "This bot is already entered in the league."
ERROR_BOT_NOT_ACTIVE = "Bot {name} is paused or unhealthy and cannot be entered."
ERROR_UNKNOWN_BOTS = "Unknown bot ids: {ids}."
ERROR_RULESET_PLAYERS = "Set the table size with 'players', not in the ruleset options."
ERROR_TRANSITION = "A league that is {status} cannot be {action}."
ERROR_MOVE_TIMEOUT = "move_timeout_ms must be between {low} and {high}."
ERROR_MAX_FAULTS = "max_faults must be between {low} and {high}."
ERROR_DELETE_NOT_ALLOWED = "Only the league's creator or staff may delete it."
ERROR_DELETE_STARTED = "Only a league that never started can be deleted; this one is {status}."
ERROR_LEAGUE_NAME_TAKEN = "A league with this name already exists; choose another name."
ERROR_BOTS_REPEATED = "Each bot may be entered once; listed more than once: {ids}."
ERROR_NOT_ACCEPTING_ENTRY = (
    "Bot {name} is another user's and does not accept challenges: only its owner may enter it."
)
ERROR_TIMEOUT_FOR_OTHERS = (
    "Another user's bot ({names}) enters a league only with move_timeout_ms of at least {low}, "
    "rated play's: no league may make a bot miss moves it would make in time there."
)


class QueueUnavailable(Exception):
    """The match queue (the Celery broker) cannot be reached: nothing was changed."""


MOVE_TIMEOUT_RANGE = (10, 60_000)
MAX_FAULTS_RANGE = (0, 100)
UNFINISHED = (League.Status.OPEN, League.Status.RUNNING, League.Status.PAUSED)
# Leagues whose sets are added as they go: their own service says when they are done.
GROWING = (League.Kind.LADDER, League.Kind.TEST)


def pool_name(ruleset: Ruleset, players: int) -> str:
    """Rating pools split by rules and table size: an Elo from duels says little about trios."""
    return f"{ruleset.name}/{players}p"


def league_ruleset(league: League) -> Ruleset:
    return Ruleset.from_dict(league.ruleset)


def _resolve_ruleset(name: str, options: Mapping[str, Any] | None, players: int) -> Ruleset:
    options = dict(options or {})
    if "players" in options or "teams" in options:
        raise ValidationError({"ruleset": [ERROR_RULESET_PLAYERS]})
    options.update(table_options(players))
    try:
        return Ruleset.from_preset(name, options)
    except RulesetError as error:
        raise ValidationError({"ruleset": error.problems}) from None


def _check_range(value: int, bounds: tuple[int, int], message: str) -> list[str]:
    low, high = bounds
    return [] if low <= value <= high else [message.format(low=low, high=high)]


def _bots_for_entry(bot_ids: Iterable[int]) -> list[Bot]:
    ids = list(dict.fromkeys(bot_ids))
    bots = {bot.id: bot for bot in Bot.objects.filter(id__in=ids)}
    missing = [str(i) for i in ids if i not in bots]
    if missing:
        raise ValidationError({"bots": [ERROR_UNKNOWN_BOTS.format(ids=", ".join(missing))]})
    fit = set(bots_schedulable().filter(id__in=ids).values_list("id", flat=True))
    paused = [bots[i].name for i in ids if i not in fit]
    if paused:
        raise ValidationError({"bots": [ERROR_BOT_NOT_ACTIVE.format(name=n) for n in paused]})
    return [bots[i] for i in ids]


def league_create_errors(*, name: str, players: int, bot_ids: list[int]) -> dict[str, list[str]]:
    """Field → messages for a league a user asks for (API and pages): a name not taken (case
    aside), each bot once, enough bots for one table. Checked before anything is written, so a
    league that could never start is refused, not created and left in the public list.
    """
    errors: dict[str, list[str]] = {}
    if League.objects.filter(name__iexact=name).exists():
        errors["name"] = [ERROR_LEAGUE_NAME_TAKEN]
    repeated = sorted({bot for bot in bot_ids if bot_ids.count(bot) > 1})
    if repeated:
        ids = ", ".join(map(str, repeated))
        errors["bots"] = [ERROR_BOTS_REPEATED.format(ids=ids)]
    elif players in TABLE_SIZES and len(bot_ids) < minimum_bots(players):
        message = ERROR_TOO_FEW_BOTS.format(minimum=minimum_bots(players), players=players)
        errors["bots"] = [message]
    return errors


def league_entry_errors(
    *, creator: Any, bots: Sequence[Bot], move_timeout_ms: int
) -> dict[str, list[str]]:
    """Field → messages for another user's bots a user's league may not enter: one whose owner
    turned ``accepts_challenges`` off, and any with a move timeout below rated play's
    (``ESCOBA_RATED_MOVE_TIMEOUT_MS``). A user's own bots enter on any terms; staff and the
    arena's own accounts choose rated entrants and are not bound.

    Why: a league of someone else's would otherwise be a way to harass a bot (a 10 ms timeout
    and no faults allowed forfeit every game). Only rated games move rated standing
    (``services.ratings.game_no_shows_record``), so such a league could not take a bot out of
    rated play anyway; these rules keep it from spoiling the bot's record too.
    """
    if may_create_rated(creator):
        return {}
    others = [bot for bot in bots if bot.owner_id != creator.pk]
    errors: dict[str, list[str]] = {}
    closed = [bot.name for bot in others if not bot.accepts_challenges]
    if closed:
        errors["bots"] = [ERROR_NOT_ACCEPTING_ENTRY.format(name=name) for name in closed]
    low = rated_move_timeout_ms()
    if others and move_timeout_ms < low:
        names = ", ".join(bot.name for bot in others)
        errors["move_timeout_ms"] = [ERROR_TIMEOUT_FOR_OTHERS.format(names=names, low=low)]
    return errors


def league_name_free(name: str) -> str:
    """``name``, or the first of "name (2)", "name (3)"... not taken: for leagues the arena
    names itself (the ladder's, the demo league)."""
    candidate, number = name, 1
    while League.objects.filter(name__iexact=candidate).exists():
        number += 1
        suffix = f" ({number})"
        candidate = name[: 100 - len(suffix)] + suffix
    return candidate


@transaction.atomic
def league_create(
    *,
    creator: Any,
    name: str,
    ruleset_name: str = "classic",
    ruleset_options: Mapping[str, Any] | None = None,
    players: int = 2,
    games_per_pairing: int | None = None,
    move_timeout_ms: int | None = None,
    max_faults: int = DEFAULT_MAX_FAULTS,
    rated: bool = False,
    bot_ids: Iterable[int] = (),
    kind: str = League.Kind.LEAGUE,
) -> League:
    """Create an open league and enter ``bot_ids`` (any active bots: rankings are public).

    Only staff and the arena's own accounts create rated leagues, and only bots in rated play
    enter them, one per owner (``services.ratings.rated_league_check``); a user's league enters
    another user's bot only on rated play's terms (``league_entry_errors``).
    ``move_timeout_ms`` defaults to rated play's (``ESCOBA_RATED_MOVE_TIMEOUT_MS``).

    ``games_per_pairing`` defaults to one duplicate set (2 games, or 3 for 3-bot tables).
    Raises ``ValidationError`` with a message per field.
    """
    errors: dict[str, list[str]] = {}
    move_timeout_ms = rated_move_timeout_ms() if move_timeout_ms is None else move_timeout_ms
    games_per_pairing = games_per_pairing or (set_length(players) if players in (2, 3, 4) else 2)
    for field, message in schedule_errors(
        bot_count=minimum_bots(players) if players in (2, 3, 4) else 0,
        players=players,
        games_per_pairing=games_per_pairing,
    ).items():
        errors[field] = [message]
    if timeout_errors := _check_range(move_timeout_ms, MOVE_TIMEOUT_RANGE, ERROR_MOVE_TIMEOUT):
        errors["move_timeout_ms"] = timeout_errors
    if fault_errors := _check_range(max_faults, MAX_FAULTS_RANGE, ERROR_MAX_FAULTS):
        errors["max_faults"] = fault_errors
    if errors:
        raise ValidationError(errors)
    ruleset = _resolve_ruleset(ruleset_name, ruleset_options, players)
    bots = _bots_for_entry(bot_ids)
    if entry_errors := league_entry_errors(
        creator=creator, bots=bots, move_timeout_ms=move_timeout_ms
    ):
        raise ValidationError(entry_errors)
    if kind == League.Kind.LEAGUE:
        league_limits_check(
            creator=creator,
            bot_count=len(bots),
            players=players,
            games_per_pairing=games_per_pairing,
            move_timeout_ms=move_timeout_ms,
        )
    rated_league_check(creator=creator, rated=rated, bot_ids=[bot.id for bot in bots])
    try:
        # A savepoint: the name may have been taken since it was checked (two requests racing);
        # the constraint refuses it, and the caller gets the same error as the check gives.
        with transaction.atomic():
            league = League.objects.create(
                name=name,
                creator=creator,
                ruleset=ruleset.to_dict(),
                pool=pool_name(ruleset, players),
                players=players,
                games_per_pairing=games_per_pairing,
                move_timeout_ms=move_timeout_ms,
                max_faults=max_faults,
                rated=rated,
                kind=kind,
                seed=secrets.randbits(63),
            )
    except IntegrityError:
        if League.objects.filter(name__iexact=name).exists():
            raise ValidationError({"name": [ERROR_LEAGUE_NAME_TAKEN]}) from None
        raise
    LeagueEntry.objects.bulk_create(LeagueEntry(league=league, bot=bot) for bot in bots)
    reads_changed("leagues")
    return league


def league_lock(league_id: int) -> League:
    """The league, locked for a change: every change of a league's state begins here, so its
    cached reads, and the list of leagues that shows its status, are invalidated here too (a
    lock that changes nothing costs one bump)."""
    league = League.objects.select_for_update().get(pk=league_id)
    reads_changed(f"league:{league_id}", "leagues")
    return league


def _require_creator(league: League, user: Any) -> None:
    if league.creator_id != user.pk:
        raise PermissionDenied(ERROR_NOT_CREATOR)


def _require_status(league: League, allowed: Iterable[str], action: str) -> None:
    if league.status not in allowed:
        raise ValidationError(ERROR_TRANSITION.format(status=league.status, action=action))


@transaction.atomic
def league_enrol(*, league_id: int, bot_id: int, user: Any) -> LeagueEntry:
    """An owner enters one of their own active bots into an open league."""
    league = league_lock(league_id)
    bot = Bot.objects.get(pk=bot_id)
    if bot.owner_id != user.pk:
        raise PermissionDenied(ERROR_NOT_BOT_OWNER)
    if league.status != League.Status.OPEN:
        raise ValidationError({"league": [ERROR_NOT_OPEN]})
    if not bots_schedulable().filter(pk=bot.pk).exists():
        raise ValidationError({"bot": [ERROR_BOT_NOT_ACTIVE.format(name=bot.name)]})
    if LeagueEntry.objects.filter(league=league, bot=bot).exists():
        raise ValidationError({"bot": [ERROR_ALREADY_ENTERED]})
    entered = league.entries.values_list("bot_id", flat=True)
    if league.rated and (errors := rated_entry_errors(bot_ids=[bot.id], beside=entered)):
        raise ValidationError(errors)
    return LeagueEntry.objects.create(league=league, bot=bot)


def _entered_bot_ids(league: League) -> list[int]:
    """The league's bots in the order they were entered: the schedule's order."""
    return list(league.entries.order_by("id").values_list("bot_id", flat=True))


def _schedule_check(league: League, bot_ids: list[int]) -> None:
    """Refuse, before anything is written, a league whose schedule cannot be made: at start,
    where a 400 still reaches the user (the schedule itself is written later, by a task)."""
    errors = schedule_errors(
        bot_count=len(bot_ids), players=league.players, games_per_pairing=league.games_per_pairing
    )
    if not errors and plays_individual_partnerships(league):
        owner_of = dict(Bot.objects.filter(pk__in=bot_ids).values_list("pk", "owner_id"))
        if not individual_tables(bot_ids, owner_of):
            errors = {"bots": ERROR_TOO_FEW_OWNERS}
    if errors:
        raise ValidationError({field: [message] for field, message in errors.items()})


def _planned_schedule(league: League) -> list[ScheduledMatch]:
    """Every match of the league, in play order (the same every time: it follows the seed)."""
    bot_ids = _entered_bot_ids(league)
    _schedule_check(league, bot_ids)
    if plays_individual_partnerships(league):
        owner_of = dict(Bot.objects.filter(pk__in=bot_ids).values_list("pk", "owner_id"))
        try:
            return build_individual_schedule(
                bot_ids,
                owner_of=owner_of,
                sets=league.games_per_pairing // set_length(league.players),
                seed=league.seed,
            )
        except ValueError as error:
            raise ValidationError({"bots": [str(error)]}) from error
    return build_schedule(
        bot_ids,
        players=league.players,
        games_per_pairing=league.games_per_pairing,
        seed=league.seed,
        shared=_deals_rule(league, bot_ids),
    )


def _write_schedule(league: League) -> list[int]:
    """Create every match, game and seat of the league; returns the match ids in play order."""
    return _write_matches(league, _planned_schedule(league))


def _deals_rule(league: League, bot_ids: Iterable[int]) -> Callable[[Sequence[int]], bool]:
    """Whether a set of these bots may share one deal in this league (``deals_shared``: only
    unrated sets of one owner's bots); any other set is dealt afresh, game by game."""
    owners = dict(Bot.objects.filter(id__in=set(bot_ids)).values_list("id", "owner_id"))

    def shared(table: Sequence[int]) -> bool:
        return deals_shared(rated=league.rated, owners=[owners[b] for b in table])

    return shared


def plays_individual_partnerships(league: League) -> bool:
    """Whether the league seats four different bots at each partnership table, partners rotating
    (``games.scheduling.build_individual_schedule``): rated partnership play, where a bot
    holding both seats of a team would see its partner's hand. A user's unrated partnership
    league fields one bot per team instead (a shared-hand team, as its pages say)."""
    return league.players == INDIVIDUAL_TABLE and bool(league.rated)


def _set_seatings(league: League, table: tuple, number: int) -> tuple[tuple, ...]:
    """The games of one set among ``table`` in a league that grows set by set."""
    if plays_individual_partnerships(league) and len(table) == INDIVIDUAL_TABLE:
        return tuple(individual_seatings(table))
    return tuple(duplicate_seatings(table, league.players, number))


def _write_matches(league: League, schedule: list[ScheduledMatch]) -> list[int]:
    """Store planned matches with their games and seats; returns the match ids in order."""
    ruleset = league_ruleset(league)
    matches = Match.objects.bulk_create(
        Match(league=league, number=m.number, round=m.round, seed=m.seed) for m in schedule
    )
    Match.bots.through.objects.bulk_create(
        Match.bots.through(match_id=match.id, bot_id=bot_id)
        for match, planned in zip(matches, schedule, strict=True)
        for bot_id in planned.participants
    )
    games = Game.objects.bulk_create(
        Game(league=league, match=match, number=n, seed=seed, seating=list(seating))
        for match, planned in zip(matches, schedule, strict=True)
        for n, (seating, seed) in enumerate(zip(planned.games, planned.seeds, strict=True), 1)
    )
    Seat.objects.bulk_create(
        Seat(game=game, seat=seat, team=ruleset.team_of(seat), bot_id=bot_id)
        for game in games
        for seat, bot_id in enumerate(game.seating)
    )
    league_tally_add(league_id=league.id, games=len(games))  # the league's progress
    return [match.id for match in matches]


def league_add_sets(*, league: League, tables: Sequence[Sequence[int]]) -> list[int]:
    """Append one set per table to a running league that grows (a ladder, a test), and send
    them to the workers when the caller's transaction commits.

    Call with the league's row locked (``select_for_update``): the new matches are numbered
    after the last one, and each gets its own seed from the league's. A set is dealt afresh,
    game by game, unless the league is unrated and its bots have one owner (``deals_shared``:
    a version test of two of one's own bots keeps duplicate deals). Bots not yet entered are
    entered, so the league lists everyone who played in it.
    """
    if not tables:
        return []
    last = league.matches.order_by("-number").values_list("number", flat=True).first() or 0
    shared = _deals_rule(league, {b for t in tables for b in t})
    schedule = []
    for number, table in enumerate(tables, start=last + 1):
        seatings = _set_seatings(league, tuple(table), number)
        seed = match_seed(league.seed, number)
        schedule.append(
            ScheduledMatch(
                number=number,
                round=number,
                participants=tuple(table),
                seed=seed,
                games=seatings,
                seeds=set_seeds(seed, len(seatings), shared=shared(table)),
            )
        )
    LeagueEntry.objects.bulk_create(
        [LeagueEntry(league=league, bot_id=b) for b in {b for t in tables for b in t}],
        ignore_conflicts=True,
    )
    match_ids = _write_matches(league, schedule)
    queueing.matches_enqueue_on_commit(match_ids)
    return match_ids


def league_open(*, league: League) -> League:
    """Mark a league that grows set by set as running, with no schedule written up front."""
    league.status = League.Status.RUNNING
    league.started_at = timezone.now()
    league.save(update_fields=["status", "started_at"])
    return league


def _require_queue() -> None:
    """Refuse early, inside the caller's transaction, when the matches could not be sent."""
    if not queueing.broker_reachable():
        raise QueueUnavailable


@transaction.atomic
def league_start(*, league_id: int, user: Any | None = None, enqueue: bool = True) -> League:
    """Check the league and the user's quotas, mark it running and leave its schedule to the
    ``leagues.schedule`` task, which writes it in batches and sends each to the workers (the
    module docstring). ``user`` None: the system, which has no quotas.

    ``enqueue=False`` writes the whole schedule here and leaves the matches for the caller to
    play (``league_run --inline``). Raises ``ValidationError`` (a league that cannot be
    scheduled, or past a size limit), ``QuotaExceeded``, ``QueueUnavailable``.
    """
    league = league_lock(league_id)
    if user is not None:
        _require_creator(league, user)
    _require_status(league, [League.Status.OPEN], "started")
    if enqueue:
        _require_queue()
    bot_ids = _entered_bot_ids(league)
    _schedule_check(league, bot_ids)
    games = schedule_games(
        bot_count=len(bot_ids), players=league.players, games_per_pairing=league.games_per_pairing
    )
    league_start_quota_check(league=league, user=user, games=games)
    league.status = League.Status.RUNNING
    league.started_at = timezone.now()
    league.games_planned = games
    league.save(update_fields=["status", "started_at", "games_planned"])
    if enqueue:
        queueing.league_schedule_enqueue_on_commit(league.id)
    else:
        _write_schedule(league)
    return league


def league_schedule_next(*, league_id: int) -> bool:
    """Write the next batch of a started round robin's schedule (``ESCOBA_SCHEDULE_BATCH_MATCHES``
    matches), in one transaction, and send its matches once it commits (not while the league is
    paused: resuming sends them). Returns whether more remain: the task then sends itself again,
    so other tasks take their turn between batches.

    Safe to run again at any time: the batch starts after the last match written, so a repeated
    or overlapping run (under the league's lock) writes nothing twice; a league no longer
    running or paused is left alone.
    """
    with transaction.atomic():
        league = league_lock(league_id)
        if league.kind in GROWING or league.status not in (
            League.Status.RUNNING,
            League.Status.PAUSED,
        ):
            return False
        written = league.matches.order_by("-number").values_list("number", flat=True).first()
        schedule = _planned_schedule(league)
        batch = schedule[written or 0 : (written or 0) + settings.ESCOBA_SCHEDULE_BATCH_MATCHES]
        if not batch:  # written whole already (a repeated run)
            return False
        match_ids = _write_matches(league, batch)
        more = (written or 0) + len(batch) < len(schedule)
        if not more:
            # The schedule is whole: what it holds is the plan, whatever was counted at the start.
            league.games_planned = sum(len(match.games) for match in schedule)
            league.save(update_fields=["games_planned"])
        if league.status == League.Status.RUNNING:
            queueing.matches_enqueue_on_commit(match_ids)
    if not more:
        league_finish_if_done(league_id=league_id)
    return more


def leagues_schedule_sweep(*, idle_s: float) -> list[int]:
    """Send ``leagues.schedule`` again for the round robins whose schedule is short of its plan
    and had no match written for ``idle_s`` seconds (its task was lost with a queue); their
    ids. A duplicate of a task still on its way writes nothing twice."""
    quiet_since = timezone.now() - datetime.timedelta(seconds=idle_s)
    short = (
        League.objects.filter(
            status__in=[League.Status.RUNNING, League.Status.PAUSED],
            started_at__lt=quiet_since,
            games_planned__gt=0,
        )
        .exclude(kind__in=GROWING)
        .annotate(written=Count("games"), last=Max("matches__created_at"))
        .filter(written__lt=F("games_planned"))
        .filter(Q(last__isnull=True) | Q(last__lt=quiet_since))
        .values_list("id", flat=True)
    )
    ids = list(short)
    for league_id in ids:
        queueing.league_schedule_enqueue_on_commit(league_id)
    return ids


@transaction.atomic
def league_pause(*, league_id: int, user: Any) -> League:
    """Stop handing out matches; games already being played finish and count."""
    league = league_lock(league_id)
    _require_creator(league, user)
    _require_status(league, [League.Status.RUNNING], "paused")
    league.status = League.Status.PAUSED
    league.save(update_fields=["status"])
    return league


@transaction.atomic
def league_resume(*, league_id: int, user: Any) -> League:
    """Send again the matches that wait (pending) with no message in the queue.

    A match whose message is still queued is not sent twice
    (``queueing.matches_requeue_on_commit``): its message finds the league running again. A
    match cut off during the pause was made pending by the recovery, and one whose worker died
    unseen is released by the sweep.
    """
    league = league_lock(league_id)
    _require_creator(league, user)
    _require_status(league, [League.Status.PAUSED], "resumed")
    _require_queue()
    league.status = League.Status.RUNNING
    league.save(update_fields=["status"])
    waiting = list(
        league.matches.filter(status=Match.Status.PENDING)
        .order_by("number")
        .values_list("id", flat=True)
    )
    queueing.matches_requeue_on_commit(waiting)
    transaction.on_commit(lambda: league_finish_if_done(league_id=league.id))
    return league


@transaction.atomic
def league_cancel(*, league_id: int, user: Any) -> League:
    """Drop the matches not yet begun; finished games (and their ratings) stay."""
    league = league_lock(league_id)
    _require_creator(league, user)
    _require_status(league, UNFINISHED, "cancelled")
    league.status = League.Status.CANCELLED
    league.finished_at = timezone.now()
    league.save(update_fields=["status", "finished_at"])
    league.matches.filter(status=Match.Status.PENDING).update(status=Match.Status.CANCELLED)
    return league


@transaction.atomic
def league_delete(*, league_id: int, user: Any) -> None:
    """Delete a league that never started, so that junk does not stay in the public list.

    Its creator or staff may; a league that started has games in the records and stays.
    """
    league = league_lock(league_id)
    if league.creator_id != user.pk and not user.is_staff:
        raise PermissionDenied(ERROR_DELETE_NOT_ALLOWED)
    if league.status != League.Status.OPEN:
        raise ValidationError(ERROR_DELETE_STARTED.format(status=league.status))
    league.delete()
    reads_changed("catalog")


@transaction.atomic
def league_finish_if_done(*, league_id: int) -> bool:
    """Mark a running league finished once no match is left to play. Safe to call any time.

    This check runs after every match, under the league's row lock, so the last of several
    matches finishing together is the one that sees none left; no chord result is needed.
    """
    league = league_lock(league_id)
    if league.status != League.Status.RUNNING or league.kind in GROWING:
        return False
    if league.matches.filter(status__in=[Match.Status.PENDING, Match.Status.RUNNING]).exists():
        return False
    if league.games.count() < league.games_planned:  # its schedule is still being written
        return False
    league.status = League.Status.FINISHED
    league.finished_at = timezone.now()
    league.save(update_fields=["status", "finished_at"])
    return True


def system_user(username: str) -> Any:
    """An account owning what the system makes (ladder leagues, demo bots); it cannot log in.

    Sign-up refuses these names (tournaments/usernames.py), but an account may hold one from
    before: one that can log in (a usable password, or active) is a stranger's, and is renamed
    (``<name>-renamed-<id>``, its bots and leagues still its own) so that the arena's account
    is made afresh and nothing the arena makes is ever handed to it.
    """
    users = get_user_model().objects
    with transaction.atomic():
        user = users.select_for_update().filter(username=username).first()
        if user is not None and (user.is_active or user.has_usable_password()):
            logger.warning("account %s (id %s) held a system name; renamed", username, user.pk)
            user.username = f"{username}-renamed-{user.pk}"
            user.save(update_fields=["username"])
            user = None
        if user is None:
            user = users.create(username=username, is_active=False)
            user.set_unusable_password()
            user.save(update_fields=["password"])
    return user
