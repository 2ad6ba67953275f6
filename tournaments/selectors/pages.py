"""Reads the browser pages (the ``web`` app) need: rankings, league lists, a bot's profile, a
replay, and the rows each page shows. The pages read through these and never query the ORM.

The league selectors (``selectors.leagues``) give standings, ratings and histories; these add
the figures around them. A bot's latencies and faults come from the figures each seat stored
when its game finished (``Seat``), over its most recent games: a profile shows how it behaves
now and never reads a log. Its head to head comes from running totals (``HeadToHead``). Logs
live in their own table (``GameLog``): only the replay reads one.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Case, Count, F, Q, QuerySet, When
from django.db.models.functions import Lower

from games.scheduling import build_schedule, schedule_errors
from tournaments import observers
from tournaments.latency import nearest_rank_percentile
from tournaments.models import (
    Bot,
    BotVersion,
    Challenge,
    Game,
    HeadToHead,
    League,
    LeagueTally,
    Notification,
    Seat,
    VersionTest,
)
from tournaments.selectors import ladder as ladder_selectors
from tournaments.selectors import leagues as selectors
from tournaments.selectors import ratings as rating_selectors
from tournaments.selectors.fixed import fixed_rows, model_columns

RECENT_GAMES = 100


def league_progress_by_id(leagues: list[League]) -> dict[int, dict[str, Any]]:
    """Each league's games done out of scheduled, in one query for a whole page of leagues,
    from their running totals (``LeagueTally``, as ``selectors.league_progress``), plus the
    bar's percentage."""
    progress = {league.pk: {"done": 0, "total": 0, "percent": 0} for league in leagues}
    tallies = LeagueTally.objects.filter(league__in=leagues).values_list(
        "league_id", "games", "finished", "aborted"
    )
    for league_id, total, finished, aborted in tallies:
        done = finished + aborted
        progress[league_id] = {
            "done": done,
            "total": total,
            "percent": 100 * done / total if total else 0,
        }
    return progress


def _recent_seats(bot: Bot | int) -> QuerySet[Seat]:
    """The bot's seats in its finished games, newest first: read from the top of an index
    (``seat_bot_finished``) however many games the bot has played."""
    return Seat.objects.filter(bot=bot, finished_at__isnull=False).order_by(
        "-finished_at", "-game_id"
    )


_LATENCY_COLUMNS = (
    "moves", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms"
)  # fmt: skip


def _latency_rows(bot: Bot) -> list[tuple]:
    return list(
        _recent_seats(bot)
        .filter(moves__gt=0, latency_p50_ms__isnull=False)
        .values_list(*_LATENCY_COLUMNS)[:RECENT_GAMES]
    )


def _latency_figures(rows: list[tuple]) -> list[dict[str, Any]]:
    if not rows:
        return []
    moves = sum(row[0] for row in rows)
    median = [sorted(row[column] for row in rows) for column in (2, 3)]
    return [
        {"label": "p50", "ms": nearest_rank_percentile(median[0], 50)},
        {"label": "p95", "ms": nearest_rank_percentile(median[1], 50)},
        {"label": "max", "ms": max(row[4] for row in rows)},
        {"label": "mean", "ms": sum(row[0] * row[1] for row in rows) / moves},
    ]


def _fault_figures(kinds_of_seats: list[dict[str, int] | None]) -> list[dict[str, Any]]:
    counts: Counter[str] = Counter()
    for kinds in kinds_of_seats:
        counts.update(kinds or {})
    return [{"kind": kind, "count": count} for kind, count in counts.most_common()]


def bot_latency_percentiles(*, bot: Bot) -> list[dict[str, Any]]:
    """Move latency over the bot's recent games, from each seat's stored figures (never a log):
    ``[{"label", "ms"}]``, [] if none.

    ``p50`` and ``p95`` are the median over those games of each game's own percentile (a
    typical game), ``max`` the slowest move of all and ``mean`` the mean over every move.
    """
    return _latency_figures(_latency_rows(bot))


def bot_fault_counts(*, bot: Bot) -> list[dict[str, Any]]:
    """Faults by kind over the bot's recent games, most frequent first: ``[{"kind", "count"}]``,
    summed from each seat's stored ``fault_kinds``."""
    return _fault_figures(
        list(_recent_seats(bot).values_list("fault_kinds", flat=True)[:RECENT_GAMES])
    )


def _recent_seat_figures(bot_id: int) -> QuerySet[Seat]:
    # A seat without faults has no kinds to count: null, not an empty object decoded per seat.
    kinds = Case(When(~Q(fault_kinds={}), then=F("fault_kinds")), default=None)
    return _recent_seats(bot_id).values_list(*_LATENCY_COLUMNS, kinds)


def bot_latency_and_faults(*, bot: Bot) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``bot_latency_percentiles`` and ``bot_fault_counts`` from one read of the recent seats
    (a profile shows both); a second read only when fewer than ``RECENT_GAMES`` of them have
    latency figures (no-shows) and older seats may have some."""
    seats = fixed_rows(_recent_seat_figures, bot.pk, limit=RECENT_GAMES)
    timed = [row[:5] for row in seats if row[0] > 0 and row[2] is not None]
    if len(timed) < len(seats) == RECENT_GAMES:
        timed = _latency_rows(bot)
    return _latency_figures(timed), _fault_figures([row[5] for row in seats])


def _sets_in_play_hidden(league: League) -> bool:
    """Whether the league's lists must leave out the games of sets still in play: a league that
    plays anonymously (``observers.league_plays_anonymously``, ``rated_games_in_play``), unless
    it is finished, when no set is in play (a cancelled league's sets in flight still end)."""
    return observers.league_plays_anonymously(league) and league.status != League.Status.FINISHED


def _league_fault_seats(league_id: int, *, hide_in_play: bool) -> QuerySet[Seat]:
    seats = Seat.objects.filter(game__league_id=league_id, faults__gt=0)
    if hide_in_play:
        seats = seats.exclude(observers.league_sets_in_play(league_id, "game__"))
    return seats.order_by("-game_id", "seat").values_list(
        "game_id", "bot_id", "bot__name", "seat", "faults", "game__forfeit", "game__log__faults"
    )


@functools.cache
def _league_fault_query(hide_in_play: bool) -> functools.partial:
    """The fault seats' statement, with or without the sets in play, one object each:
    ``fixed_rows`` compiles each once per process."""
    return functools.partial(_league_fault_seats, hide_in_play=hide_in_play)


def league_fault_rows(*, league: League, limit: int) -> list[dict[str, Any]]:
    """The league's most recent seats with faults: who, how many of which kind, and where the
    first one happened (a replay step), newest game first; none of a rated set still in play
    (they would name its bots, ``observers.rated_games_in_play``). A fixed statement
    (``fixed_rows``)."""
    seats = fixed_rows(_league_fault_query(_sets_in_play_hidden(league)), league.pk, limit=limit)
    rows = []
    for game_id, bot_id, bot_name, seat, count, forfeit, game_faults in seats:
        faults = [fault for fault in game_faults or [] if fault.get("seat") == seat]
        kinds = Counter(str(fault.get("kind", "unknown")) for fault in faults)
        first = faults[0] if faults else None
        rows.append(
            {
                "game_id": game_id,
                "bot_id": bot_id,
                "bot": bot_name,
                "seat": seat,
                "count": count,
                "kinds": kinds.most_common(),
                "step": f"r{first['round']}p{first['play']}" if first else "",
                "forfeit": forfeit == seat,
            }
        )
    return rows


def _head_to_head_totals(bot_id: int) -> QuerySet[HeadToHead]:
    return HeadToHead.objects.filter(bot_id=bot_id, games__gt=0).values_list(
        "opponent_id", "opponent__name", "games", "wins", "draws"
    )


def bot_head_to_head(*, bot: Bot) -> list[dict[str, Any]]:
    """Wins, draws and losses against each opponent over all finished games, most played first.

    A win is a game the bot's team won; in three-player games every other seat counts as beaten
    or not by the same result. Read from the running totals (``HeadToHead``, a row per opponent)
    kept as each game is stored: a busy bot has thousands of games, which must not be counted
    again on every read of its profile.
    """
    totals = fixed_rows(_head_to_head_totals, bot.pk)
    records = [
        {
            "bot_id": opponent,
            "name": name,
            "games": games,
            "wins": wins,
            "draws": draws,
            "losses": games - wins - draws,
        }
        for opponent, name, games, wins, draws in totals
    ]
    return sorted(records, key=lambda row: (-row["games"], row["name"].lower()))


def league_planned_games(*, league: League) -> int | None:
    """How many games the league would schedule if it started now, with the bots entered so far
    (``games.scheduling``, as ``league_start`` writes them); None while it cannot start (too few
    bots). A league that started has its games written: count those instead."""
    bot_ids = list(league.entries.order_by("id").values_list("bot_id", flat=True))
    errors = schedule_errors(
        bot_count=len(bot_ids), players=league.players, games_per_pairing=league.games_per_pairing
    )
    if errors:
        return None
    schedule = build_schedule(
        bot_ids, players=league.players, games_per_pairing=league.games_per_pairing, seed=0
    )
    return sum(len(match.games) for match in schedule)


# A league's own columns, in the model's order: what ``Model.from_db`` builds an instance from.
_LEAGUE_FIELDS = model_columns(League)


def _league_shown(league_id: int) -> QuerySet[League]:
    return League.objects.filter(pk=league_id).values_list(
        *_LEAGUE_FIELDS,
        "creator__username",
        *(f"tally__{name}" for name in selectors.TALLY_COLUMNS),
    )


def league_with_progress(league_id: int) -> tuple[League, dict[str, int]] | None:
    """The league (its creator's ``username`` read with it) and its progress
    (``selectors.league_progress``), or None: one fixed statement (``fixed_rows``), where a
    Django query cost more to build than to run on every read of a league's pages."""
    rows = fixed_rows(_league_shown, league_id)
    if not rows:
        return None
    width = len(_LEAGUE_FIELDS)
    values, username, tally = rows[0][:width], rows[0][width], rows[0][width + 1 :]
    league = League.from_db(DEFAULT_DB_ALIAS, _LEAGUE_FIELDS, values)
    creator = get_user_model().from_db(
        DEFAULT_DB_ALIAS, ["id", "username"], [league.creator_id, username]
    )
    League.creator.field.set_cached_value(league, creator)
    games, finished, aborted, faults = (value or 0 for value in tally)
    return league, selectors.progress_of(
        games=games, finished=finished, aborted=aborted, faults=faults
    )


def league_find(league_id: int) -> League | None:
    """The league with its creator (its ``username`` only), or None (``league_with_progress``)."""
    found = league_with_progress(league_id)
    return found[0] if found else None


def league_rows(*, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` round robins (not the leagues behind the ladder, challenges and
    version tests): ``{"league", "bots", "progress"}`` each, in two queries."""
    leagues = list(
        League.objects.filter(kind=League.Kind.LEAGUE)
        .annotate(bot_count=Count("entries"))
        .order_by("-created_at", "-id")[:limit]
    )
    progress = league_progress_by_id(leagues)
    return [
        {"league": league, "bots": league.bot_count, "progress": progress[league.pk]}
        for league in leagues
    ]


def _game_list() -> QuerySet[Game]:
    return Game.objects.prefetch_related(selectors.seats_with_bots())


def _seats_of_games(game_ids: QuerySet, fields: tuple[str, ...]) -> QuerySet[Seat]:
    """The seats of the games of ``game_ids`` (a subquery of ids), latest finished first, as
    ``(game_id, team, bot name, *the game's fields)``."""
    return (
        Seat.objects.filter(game_id__in=game_ids)
        .order_by("-game__finished_at", "-game_id", "seat")
        .values_list("game_id", "team", "bot__name", *(f"game__{f}" for f in fields))
    )


def _games_with_seats(game_ids: QuerySet, **fields: str) -> list[dict[str, Any]]:
    """The games of ``game_ids`` (a subquery of ids), latest finished first, as plain rows read
    with their seats in one query: ``id``, each of ``fields`` (the row's key: the game's field)
    and ``seats`` ((team, bot name) per seat, in seat order)."""
    return _games_of_seats(_seats_of_games(game_ids, tuple(fields.values())), tuple(fields))


def _games_of_seats(seats: Iterable[tuple], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows of ``_seats_of_games`` as one plain row per game: ``id``, the game's fields under
    ``keys`` and ``seats`` ((team, bot name) per seat, in seat order)."""
    games: dict[int, dict[str, Any]] = {}
    for game_id, team, name, *values in seats:
        game = games.get(game_id)
        if game is None:
            game = games[game_id] = {"id": game_id, **dict(zip(keys, values, strict=True))}
            game["seats"] = []
        game["seats"].append((team, name))
    return list(games.values())


_RECENT_SHOWN = ("totals", "faults")


def _league_recent_seats(league_id: int, *, limit: int, hide_in_play: bool) -> QuerySet[Seat]:
    recent = Game.objects.filter(league_id=league_id, status=Game.Status.FINISHED)
    if hide_in_play:
        recent = recent.exclude(observers.league_sets_in_play(league_id))
    recent = recent.order_by("-finished_at", "-id").values("id")[:limit]
    return _seats_of_games(recent, _RECENT_SHOWN)


@functools.cache
def _league_recent_query(limit: int, hide_in_play: bool) -> functools.partial:
    """The recent games' statement for ``limit`` games, with or without the sets in play, one
    object each: ``fixed_rows`` compiles it once per process."""
    return functools.partial(_league_recent_seats, limit=limit, hide_in_play=hide_in_play)


def league_recent_games(*, league: League, limit: int) -> list[dict[str, Any]]:
    """The league's last ``limit`` finished games, newest first, none of a rated set still in
    play (``observers.rated_games_in_play``: they would name its bots), as plain rows: ``id``,
    ``totals``, ``faults`` and ``seats`` ((team, bot name) per seat, in seat order), in one
    fixed statement (``fixed_rows``)."""
    statement = _league_recent_query(limit, _sets_in_play_hidden(league))
    return _games_of_seats(fixed_rows(statement, league.pk), _RECENT_SHOWN)


def bot_find(bot_id: int) -> Bot | None:
    """The bot with its owner, or None."""
    return Bot.objects.select_related("owner").filter(pk=bot_id).first()


# A bot's recent games leave out those of rated sets still in play (they would name the opponent
# the bot still meets in the set, ``observers.rated_games_in_play``). They are dropped from a few
# more rows than shown, read from the top of the index: filtering in SQL joined every seat of the
# bot's history to its game's match and league, twice PostgreSQL's CPU per page. A bot plays at
# most a few rated sets at once; were more than this many of its latest games in them, its list
# would be shorter, never tell more.
_IN_PLAY_SLACK = 8


def bot_recent_games(*, bot: Bot, limit: int) -> list[Game]:
    """The bot's last ``limit`` finished games, newest first, with their league and seats; none
    of a rated set still in play (``_IN_PLAY_SLACK``)."""
    recent = _recent_seats(bot).values("game_id")[: limit + _IN_PLAY_SLACK]
    games = (
        _game_list()
        .filter(pk__in=recent)
        .select_related("league", "match")
        .order_by("-finished_at", "-id")
    )
    named = [
        game
        for game in games
        if not observers.seats_hidden(
            anonymous=observers.league_plays_anonymously(game.league),
            match_status=game.match.status,
        )
    ]
    return named[:limit]


@functools.cache
def _recent_game_seats(limit: int) -> Callable[[int], QuerySet[Seat]]:
    """The seats of a bot's last ``limit`` finished games and a few more (``_IN_PLAY_SLACK``),
    latest first, as a statement ``fixed_rows`` compiles once: game id, team, bot name, the
    game's totals and league, whether its league is rated and its set's status."""

    def seats(bot_id: int) -> QuerySet[Seat]:
        recent = _recent_seats(bot_id).values("game_id")[: limit + _IN_PLAY_SLACK]
        rows = Seat.objects.filter(game_id__in=recent)
        return rows.order_by("-game__finished_at", "-game_id", "seat").values_list(
            "game_id", "team", "bot__name", "game__totals", "game__league_id",
            "game__league__name", "game__league__rated", "game__match__status",
        )  # fmt: skip

    return seats


def bot_recent_game_rows(*, bot: Bot, limit: int) -> list[dict[str, Any]]:
    """``bot_recent_games`` as plain rows, in one query: ``id``, ``totals``, ``league_id``,
    ``league_name`` and ``seats`` ((team, bot name) per seat, in seat order)."""
    games: dict[int, dict[str, Any]] = {}
    for game_id, team, name, totals, league_id, league, rated, status in fixed_rows(
        _recent_game_seats(limit), bot.pk
    ):
        if observers.seats_hidden(anonymous=rated, match_status=status):
            continue
        if game_id not in games:
            if len(games) == limit:
                break
            games[game_id] = {"id": game_id, "totals": totals, "league_id": league_id,
                              "league_name": league, "seats": []}  # fmt: skip
        games[game_id]["seats"].append((team, name))
    return list(games.values())


# The columns of a bot its page reads, in the model's order (as ``Model.from_db`` takes them).
_SHOWN_BOT = model_columns(
    Bot,
    {"id", "name", "owner_id", "description", "status", "health", "protocol_version",
     "last_checked_at", "accepts_challenges", "no_shows", "no_shows_in_row", "rated_paused_at"},
)  # fmt: skip


def _bot_with_owner(bot_id: int) -> QuerySet[Bot]:
    return Bot.objects.filter(pk=bot_id).order_by().values_list(*_SHOWN_BOT, "owner__username")


def bot_shown(bot_id: int) -> Bot | None:
    """The bot with its owner as its public page shows it, or None: only the columns the page
    reads (not its secret, which would be decrypted for nothing, nor its last check report,
    kilobytes of JSON), from a statement compiled once (``fixed_rows``)."""
    rows = fixed_rows(_bot_with_owner, bot_id)
    if not rows:
        return None
    *values, username = rows[0]
    bot = Bot.from_db(DEFAULT_DB_ALIAS, _SHOWN_BOT, values)
    owner_model = Bot.owner.field.related_model
    Bot.owner.field.set_cached_value(
        bot, owner_model.from_db(DEFAULT_DB_ALIAS, ("id", "username"), (bot.owner_id, username))
    )
    return bot


_RATING_COLUMNS = ("pool", "rating", "rating_low", "rating_high", "provisional", "sets", "games",
                   "rank")  # fmt: skip


def _version_ratings(bot_id: int) -> QuerySet[BotVersion]:
    return (
        BotVersion.objects.filter(bot_id=bot_id)
        .order_by("-first_seen_at", "-id", "ratings__pool")
        .values_list(
            "id", "version", "first_seen_at", *(f"ratings__{name}" for name in _RATING_COLUMNS)
        )
    )


def bot_rating_figures(*, bot: Bot) -> dict[str, Any]:
    """The bot's published ratings as its page shows them, in one query: ``pools`` (where any
    version has a rating, alphabetically, as ``rating_selectors.bot_pools``), ``current`` (its
    current version's ratings by pool, as ``bot_current_ratings``) and ``versions`` (newest
    first, each with its ratings by pool, as ``bot_versions``); ratings as plain dicts of
    ``pool``, ``rating``, ``rating_low``, ``rating_high``, ``provisional``, ``sets``, ``games``
    and ``rank``."""
    rows = fixed_rows(_version_ratings, bot.pk)
    versions: dict[int, dict[str, Any]] = {}
    for version_id, version, first_seen_at, *figures in rows:
        entry = versions.setdefault(
            version_id,
            {
                "version": version,
                "current": version == bot.protocol_version,
                "first_seen_at": first_seen_at,
                "ratings": [],
            },
        )
        if figures[0] is not None:
            rating = dict(zip(_RATING_COLUMNS, figures, strict=True))
            for name in ("rating", "rating_low", "rating_high"):
                rating[name] = float(rating[name])
            entry["ratings"].append(rating)
    current = [entry for entry in versions.values() if entry["current"]]
    return {
        "pools": sorted({r["pool"] for entry in versions.values() for r in entry["ratings"]}),
        "current": current[0]["ratings"] if current else [],
        "versions": list(versions.values()),
    }


def _ladder_query(
    model: type[Challenge | VersionTest], sides: tuple[str, str], shown: dict[str, str], bot_id: int
) -> QuerySet:
    """The rows of ``model`` with bot ``bot_id`` on either side, newest first, as the values of
    ``shown``'s columns."""
    either = Q(**{sides[0]: bot_id}) | Q(**{sides[1]: bot_id})
    rows = model.objects.filter(either).order_by("-created_at", "-id")
    return rows.values_list(*shown.values())


def _shaped(rows: list[tuple], shown: dict[str, str]) -> list[dict[str, Any]]:
    """``rows`` as plain dicts shaped like the instances a template reads: ``shown`` maps each
    key (dotted for a related row's field, as ``bot.name``) to its column."""
    shaped = []
    for values in rows:
        row: dict[str, Any] = {}
        for key, value in zip(shown, values, strict=True):
            *related, name = key.split(".")
            target = row
            for part in related:
                target = target.setdefault(part, {})
            target[name] = value
        shaped.append(row)
    return shaped


_CHALLENGE_SHOWN = {"pk": "id", "sets": "sets", "created_at": "created_at",
                    "bot.name": "bot__name", "opponent.name": "opponent__name",
                    "league.status": "league__status"}  # fmt: skip
_VERSION_TEST_SHOWN = {"pk": "id", "status": "status", "sets": "sets",
                       "candidate.name": "candidate__name",
                       "baseline.name": "baseline__name"}  # fmt: skip
# Fixed statements (``fixed_rows``): a bot's page reads both on every request.
_challenge_query = functools.partial(
    _ladder_query, Challenge, ("bot", "opponent"), _CHALLENGE_SHOWN
)
_version_test_query = functools.partial(
    _ladder_query, VersionTest, ("candidate", "baseline"), _VERSION_TEST_SHOWN
)


def bot_challenge_rows(*, bot: Bot) -> list[dict[str, Any]]:
    """``ladder_selectors.bot_challenges`` as its page lists them (``pk``, ``sets``,
    ``created_at``, ``bot.name``, ``opponent.name``, ``league.status``): no two bots and a
    league built, with the bots' secrets decrypted, per challenge."""
    rows = fixed_rows(_challenge_query, bot.pk, limit=ladder_selectors.LISTED)
    return _shaped(rows, _CHALLENGE_SHOWN)


def bot_version_test_rows(*, bot: Bot) -> list[dict[str, Any]]:
    """``ladder_selectors.bot_version_tests`` as its page lists them (``pk``, ``status``,
    ``sets``, ``candidate.name``, ``baseline.name``): without each test's series and counts,
    which grow with its sets."""
    rows = fixed_rows(_version_test_query, bot.pk, limit=ladder_selectors.LISTED)
    return _shaped(rows, _VERSION_TEST_SHOWN)


def bots_of_owner(*, owner: AbstractBaseUser) -> QuerySet[Bot]:
    """The owner's bots by name, with their ratings."""
    return Bot.objects.filter(owner=owner).prefetch_related("ratings").order_by("name")


def owner_bots_at_play(*, owner: AbstractBaseUser, games: int) -> list[Bot]:
    """The owner's bots by name (``bots_of_owner``), each with how it is doing, for "My bots":
    ``current_ratings``, its current version's published rating per pool (with its rank,
    interval and provisional mark), and ``latest_games``, its last ``games`` finished games,
    newest first, each a dict: ``game``, ``result`` (won, lost or drawn, for the bot's side),
    ``score`` (the totals, its side's first), ``no_show`` and ``faults`` (its own seat's)."""
    bots = list(bots_of_owner(owner=owner))
    for bot in bots:
        bot.current_ratings = list(
            rating_selectors.bot_current_ratings(bot).select_related("version")
        )
        bot.latest_games = [
            _game_for_bot(game, bot) for game in bot_recent_games(bot=bot, limit=games)
        ]
    return bots


def _game_for_bot(game: Game, bot: Bot) -> dict[str, Any]:
    """A finished game as ``bot`` played it (the first of its seats, for a bot seated twice)."""
    seat = min((s for s in game.seats.all() if s.bot_id == bot.pk), key=lambda s: s.seat)
    totals = list(game.totals or [])
    if game.winner is None:
        result = "drawn"
    else:
        result = "won" if game.winner == seat.team else "lost"
    ours = totals[seat.team : seat.team + 1]
    score = ours + [points for team, points in enumerate(totals) if team != seat.team]
    return {
        "game": game,
        "result": result,
        "score": score,
        "no_show": seat.no_show,
        "faults": seat.faults,
    }


def league_bot_choices() -> list[tuple[int, str]]:
    """(id, "name (owner)") of every bot a new league may enter, by name: the bots a league may
    schedule (``selectors.bots_schedulable``), as the API accepts them."""
    bots = selectors.bots_schedulable().select_related("owner").order_by(Lower("name"), "id")
    return [(bot.id, f"{bot.name} ({bot.owner.username})") for bot in bots]


def owner_notifications(*, owner: AbstractBaseUser, limit: int) -> list[Notification]:
    """What the owner was told, newest first, with the bot each notice is about."""
    notices = Notification.objects.filter(user=owner).select_related("bot")
    return list(notices.order_by("-created_at", "-id")[:limit])


def game_find(game_id: int) -> Game | None:
    """The game with its league, match, log (if it has one), seats' bots and the match's games
    (what ``observers.game_sight`` reads), or None."""
    games = Game.objects.select_related("league", "match", "log").prefetch_related(
        selectors.seats_with_bots(), selectors.match_games_numbered()
    )
    return games.filter(pk=game_id).first()


def game_status(game_id: int) -> str | None:
    """The game's status (pending, finished, aborted), or None: what a live view polls."""
    return Game.objects.filter(pk=game_id).values_list("status", flat=True).first()


def league_live_version(league_id: int) -> tuple[str, bool] | None:
    """What the live part of a league page depends on, as ``"status:done"``, and whether the
    league is over (no change is coming); None when there is no such league. The page renders
    the same string (``data-live-version``), so its stream knows when the page is behind."""
    league = League.objects.filter(pk=league_id).values_list("status", flat=True).first()
    if league is None:
        return None
    tally = LeagueTally.objects.filter(league_id=league_id).values_list("finished", "aborted")
    done = sum(tally.first() or (0, 0))
    return f"{league}:{done}", league in (League.Status.FINISHED, League.Status.CANCELLED)
