"""The versions a bot announces, and the versions a rated set belongs to.

A version never seen before starts a new entry, rated from its own sets only
(``bot_version_observe``). A set belongs to the versions its bots announced when it began
(``match_versions_record``), whatever they announce when it ends (docs/ratings.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import QuerySet
from django.utils import timezone

from tournaments.models import Bot, BotVersion, Match, Rating
from tournaments.read_cache import reads_changed
from tournaments.selectors.fixed import fixed_rows
from tournaments.services.rating_fits import ratings_fit_request


def bot_version_current(*, bot: Bot) -> BotVersion:
    """The bot's current version row (its ``protocol_version``), made when first seen."""
    version, _ = BotVersion.objects.get_or_create(bot=bot, version=bot.protocol_version)
    return version


def bot_version_observe(*, bot: Bot) -> BotVersion:
    """Note that the bot now announces ``bot.protocol_version``: registration, URL change, check.

    A version never seen before starts a new entry: it is rated from its own sets only, so it is
    provisional until it has enough. The bot's older versions leave the published ranking at once
    (their ratings stay, in its profile) and the pools they were ranked in are refitted.
    """
    version = bot_version_current(bot=bot)
    BotVersion.objects.filter(pk=version.pk).update(last_seen_at=timezone.now())
    stale = Rating.objects.filter(bot=bot, rank__isnull=False).exclude(version=version)
    pools = sorted(set(stale.values_list("pool", flat=True)))
    if pools:
        stale.update(rank=None, los_next=None)
        reads_changed("ratings")
        for pool in pools:
            ratings_fit_request(pool=pool)
    return version


def match_versions_record(*, match: Match, bots: Sequence[Bot]) -> bool:
    """Note the versions the bots of a rated set announce as it begins: its result is theirs.

    Call when a match begins (``services.matches.match_begin``, under the match's lock, with
    the match's bots, which it reads once for their addresses too); only its first beginning
    counts, so a set replayed after a restart keeps its versions. A bot that announces another
    version mid-set (a check while losing, say) moves no result onto it. Sets
    ``match.versions`` and returns True when it noted them: the caller saves the match with its
    other changes, in one statement.
    """
    if match.versions or not match.league.rated:
        return False
    known = fixed_rows(_versions_of_match_bots, match.id)
    versions = _current_version_ids(sorted(bots, key=lambda bot: bot.id), known=known)
    match.versions = {str(bot_id): version_id for bot_id, version_id in versions.items()}
    return True


def match_version_ids(*, match: Match, bots: list[Bot]) -> dict[int, int]:
    """Bot id -> the version the set is recorded for: the one noted when it began, or (a set
    begun before versions were noted) the current one."""
    noted = {int(bot_id): version_id for bot_id, version_id in (match.versions or {}).items()}
    missing = [bot for bot in bots if bot.id not in noted]
    if missing:
        noted.update(_current_version_ids(missing))
    return {bot.id: noted[bot.id] for bot in bots}


def _versions_of_match_bots(match_id: int) -> QuerySet:
    """Every version row of the match's bots: a fixed statement (``fixed_rows``)."""
    versions = BotVersion.objects.filter(bot__matches=match_id).order_by()
    return versions.values_list("id", "bot_id", "version")


def _current_version_ids(
    bots: list[Bot], *, known: Iterable[tuple[int, int, str]] | None = None
) -> dict[int, int]:
    """Bot id -> its current version's id, in one query (a version not seen yet is made).
    ``known``: the bots' version rows ``(id, bot_id, version)``, read already."""
    wanted = {bot.id: bot.protocol_version for bot in bots}
    if known is None:
        rows = BotVersion.objects.filter(bot_id__in=wanted).order_by()
        known = rows.values_list("id", "bot_id", "version")
    found = {
        bot_id: version_id
        for version_id, bot_id, version in known
        if bot_id in wanted and wanted[bot_id] == version
    }
    for bot in bots:
        if bot.id not in found:
            found[bot.id] = bot_version_current(bot=bot).id
    return {bot.id: found[bot.id] for bot in bots}
