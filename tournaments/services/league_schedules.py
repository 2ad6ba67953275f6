"""Starting a league and writing its schedule.

Starting a league checks it (and the user's quotas, ``services.quotas``), marks it running with
the number of games its schedule will hold (``games_planned``), and leaves the writing to a task:
the schedule is written in batches of ``ESCOBA_SCHEDULE_BATCH_MATCHES`` matches
(``league_schedule_next``), each batch in its own transaction and sent to the workers once it
commits, so a start answers at once however large the league. Starting needs the match queue
(``services.league_states``: ``QueueUnavailable``).

Leagues that grow set by set (the ladder, version tests: ``services.league_states.GROWING``) are
opened with no schedule and get their sets as they go (``league_add_sets``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from games.engine import Ruleset
from games.scheduling import (
    ERROR_TOO_FEW_OWNERS,
    INDIVIDUAL_TABLE,
    ScheduledMatch,
    build_individual_schedule,
    build_schedule,
    deals_shared,
    duplicate_seatings,
    individual_seatings,
    individual_tables,
    match_seed,
    schedule_errors,
    schedule_games,
    set_length,
    set_seeds,
)
from tournaments import queueing
from tournaments.models import Bot, Game, League, LeagueEntry, Match, Seat
from tournaments.services.league_states import (
    GROWING,
    league_finish_if_done,
    league_lock,
    require_creator,
    require_queue,
    require_status,
)
from tournaments.services.quotas import league_start_quota_check
from tournaments.services.tallies import league_tally_add


def league_ruleset(league: League) -> Ruleset:
    return Ruleset.from_dict(league.ruleset)


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
        require_creator(league, user)
    require_status(league, [League.Status.OPEN], "started")
    if enqueue:
        require_queue()
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
