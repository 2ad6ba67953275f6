"""Creating a league and entering bots in it.

A league is created open, with its bots (``league_create``), once everything that can be checked
before a start is checked: the table size and games per pairing, the move timeout and faults
allowed, the ruleset, bots that exist and may play, another user's bots only on rated play's terms
(``league_entry_errors``), the creator's size limits (``services.quotas``) and who may play rated
(``services.rated_entry``). An owner enters a bot of their own while the league is open
(``league_enrol``). The arena's own leagues belong to its system accounts (``system_user``).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from games.engine import Ruleset, RulesetError
from games.faults import DEFAULT_MAX_FAULTS
from games.scheduling import (
    ERROR_TOO_FEW_BOTS,
    TABLE_SIZES,
    minimum_bots,
    schedule_errors,
    set_length,
    table_options,
)
from tournaments.models import Bot, League, LeagueEntry
from tournaments.read_cache import reads_changed
from tournaments.selectors.leagues import bots_schedulable
from tournaments.services.league_states import league_lock
from tournaments.services.quotas import league_limits_check
from tournaments.services.rated_entry import (
    may_create_rated,
    rated_entry_errors,
    rated_league_check,
    rated_move_timeout_ms,
)

logger = logging.getLogger(__name__)

ERROR_NOT_BOT_OWNER = "You may enrol only your own bots."
ERROR_NOT_OPEN = "Bots may be enrolled only while the league is open."
ERROR_ALREADY_ENTERED = "This bot is already entered in the league."
ERROR_BOT_NOT_ACTIVE = "Bot {name} is paused or unhealthy and cannot be entered."
ERROR_UNKNOWN_BOTS = "Unknown bot ids: {ids}."
ERROR_RULESET_PLAYERS = "Set the table size with 'players', not in the ruleset options."
ERROR_MOVE_TIMEOUT = "move_timeout_ms must be between {low} and {high}."
ERROR_MAX_FAULTS = "max_faults must be between {low} and {high}."
ERROR_LEAGUE_NAME_TAKEN = "A league with this name already exists; choose another name."
ERROR_BOTS_REPEATED = "Each bot may be entered once; listed more than once: {ids}."
ERROR_NOT_ACCEPTING_ENTRY = (
    "Bot {name} is another user's and does not accept challenges: only its owner may enter it."
)
ERROR_TIMEOUT_FOR_OTHERS = (
    "Another user's bot ({names}) enters a league only with move_timeout_ms of at least {low}, "
    "rated play's: no league may make a bot miss moves it would make in time there."
)

MOVE_TIMEOUT_RANGE = (10, 60_000)
MAX_FAULTS_RANGE = (0, 100)


def pool_name(ruleset: Ruleset, players: int) -> str:
    """Rating pools split by rules and table size: an Elo from duels says little about trios."""
    return f"{ruleset.name}/{players}p"


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
    (``services.no_shows.game_no_shows_record``), so such a league could not take a bot out of
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
    enter them, one per owner (``services.rated_entry.rated_league_check``); a user's league enters
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
