"""Reads only the browser pages need: the rankings table, a bot's latency, faults and rivals.

The league selectors (``tournaments.selectors``) give standings, ratings and histories; these add
the figures around them. Latencies and faults come from the match runner's per-play facts kept
with each game's log, so only a bot's most recent games are read: a profile shows how it behaves
now.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from tournaments import selectors
from tournaments.elo import performance
from tournaments.models import Bot, Game, GameLog, League, RatingChange, Seat

RECENT_GAMES = 100
PERCENTILES = (50, 90, 99)
TREND_GAMES = 10


def ranking_rows(*, pool: str) -> list[dict[str, Any]]:
    """The ladder of ``pool`` with, per bot, its ± 95% interval, win rate and recent trend.

    The interval comes from the bot's rated results in the pool (a performance estimate); the
    trend is the sum of its last ``TREND_GAMES`` rating changes.
    """
    ratings = list(selectors.rankings(pool).select_related("bot__owner"))
    bot_ids = [rating.bot_id for rating in ratings]
    results: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])  # wins, draws, losses
    seats = Seat.objects.filter(
        bot_id__in=bot_ids,
        game__rated=True,
        game__league__pool=pool,
        game__status=Game.Status.FINISHED,
    ).values_list("bot_id", "team", "game_id", "game__winner")
    counted: set[tuple[int, int]] = set()
    for bot_id, team, game_id, winner in seats:
        if (bot_id, game_id) in counted:
            continue  # a bot fielding both seats of a partnership played one game, not two
        counted.add((bot_id, game_id))
        results[bot_id][0 if winner == team else 1 if winner is None else 2] += 1
    trends: dict[int, float] = defaultdict(float)
    # One query for every bot's last changes: number each bot's changes newest first, keep the
    # first TREND_GAMES of each.
    recent_changes = (
        RatingChange.objects.filter(bot_id__in=bot_ids, pool=pool)
        .annotate(newness=Window(RowNumber(), partition_by=[F("bot_id")], order_by=F("id").desc()))
        .filter(newness__lte=TREND_GAMES)
        .values_list("bot_id", "delta")
    )
    for bot_id, delta in recent_changes:
        trends[bot_id] += float(delta)
    rows = []
    for rank, rating in enumerate(ratings, start=1):
        wins, draws, losses = results[rating.bot_id]
        played = wins + draws + losses
        estimate = performance(wins=wins, draws=draws, losses=losses)
        rows.append(
            {
                "rank": rank,
                "bot_id": rating.bot_id,
                "name": rating.bot.name,
                "owner": rating.bot.owner.username,
                "rating": rating.rating,
                "games": rating.games,
                "interval": (estimate.high - estimate.low) / 2 if estimate else None,
                "win_rate": 100 * wins / played if played else None,
                "trend": trends[rating.bot_id],
            }
        )
    return rows


def league_progress_by_id(leagues: list[League]) -> dict[int, dict[str, Any]]:
    """Each league's games done out of scheduled, in one query for a whole page of leagues.

    The same figures as ``selectors.league_progress`` (done = finished or aborted), plus the
    bar's percentage.
    """
    counts = (
        Game.objects.filter(league__in=leagues)
        .values("league_id")
        .annotate(total=Count("id"), done=Count("id", filter=~Q(status=Game.Status.PENDING)))
    )
    progress = {league.pk: {"done": 0, "total": 0, "percent": 0} for league in leagues}
    for row in counts:
        done, total = row["done"], row["total"]
        progress[row["league_id"]] = {
            "done": done,
            "total": total,
            "percent": 100 * done / total if total else 0,
        }
    return progress


def nearest_rank_percentile(sorted_values: list[float], percent: int) -> float:
    """The nearest-rank percentile: always one of the measured values, never an interpolation."""
    rank = max(1, -(-percent * len(sorted_values) // 100))
    return sorted_values[rank - 1]


def _recent_seats(bot: Bot) -> QuerySet[Seat]:
    """The bot's seats in its recent finished games, newest first."""
    return Seat.objects.filter(bot=bot, game__status=Game.Status.FINISHED).order_by(
        "-game__finished_at", "-game_id"
    )


def _plays_of(log: GameLog, seat: int) -> list[dict[str, Any]]:
    """The runner's meta rows of ``seat``'s plays in the game of ``log`` (latency, fault)."""
    meta = log.meta or []
    rounds = log.document.get("rounds") or []
    rows = []
    for round_log, round_meta in zip(rounds, meta, strict=False):
        for play, row in zip(round_log.get("plays", []), round_meta, strict=False):
            if play.get("seat") == seat and row:
                rows.append(row)
    return rows


def bot_latency_percentiles(*, bot: Bot) -> list[dict[str, Any]]:
    """Move latency percentiles over the bot's recent games: ``[{"label", "ms"}]``, [] if none."""
    latencies = sorted(
        float(row["latency_ms"])
        for seat in _recent_seats(bot).select_related("game__log")[:RECENT_GAMES]
        if hasattr(seat.game, "log")
        for row in _plays_of(seat.game.log, seat.seat)
        if row.get("latency_ms") is not None
    )
    if not latencies:
        return []
    rows = [{"label": f"p{p}", "ms": nearest_rank_percentile(latencies, p)} for p in PERCENTILES]
    rows.append({"label": "max", "ms": latencies[-1]})
    return rows


def bot_fault_counts(*, bot: Bot) -> list[dict[str, Any]]:
    """Faults by kind over the bot's recent games, most frequent first: ``[{"kind", "count"}]``."""
    counts: Counter[str] = Counter()
    seats = _recent_seats(bot).annotate(game_faults=F("game__log__faults"))[:RECENT_GAMES]
    for seat in seats:
        if not seat.faults:
            continue
        for fault in seat.game_faults or []:
            if fault.get("seat") == seat.seat:
                counts[str(fault.get("kind", "unknown"))] += 1
    return [{"kind": kind, "count": count} for kind, count in counts.most_common()]


def league_fault_rows(*, league: League, limit: int) -> list[dict[str, Any]]:
    """The league's most recent seats with faults: who, how many of which kind, and where the
    first one happened (a replay step), newest game first."""
    seats = (
        Seat.objects.filter(game__league=league, faults__gt=0)
        .select_related("bot", "game")
        .annotate(game_faults=F("game__log__faults"))
        .order_by("-game_id", "seat")[:limit]
    )
    rows = []
    for seat in seats:
        faults = [fault for fault in seat.game_faults or [] if fault.get("seat") == seat.seat]
        kinds = Counter(str(fault.get("kind", "unknown")) for fault in faults)
        first = faults[0] if faults else None
        rows.append(
            {
                "game_id": seat.game_id,
                "bot_id": seat.bot_id,
                "bot": seat.bot.name,
                "count": seat.faults,
                "kinds": kinds.most_common(),
                "step": f"r{first['round']}p{first['play']}" if first else "",
                "forfeit": seat.game.forfeit == seat.seat,
            }
        )
    return rows


def bot_head_to_head(*, bot: Bot) -> list[dict[str, Any]]:
    """Wins, draws and losses against each opponent over all finished games, most played first.

    A win is a game the bot's team won; in three-player games every other seat counts as beaten
    or not by the same result.
    """
    mine = {
        seat.game_id: seat.team
        for seat in Seat.objects.filter(bot=bot, game__status=Game.Status.FINISHED)
    }
    winners = dict(Game.objects.filter(pk__in=mine).values_list("pk", "winner"))
    records: dict[int, dict[str, Any]] = {}
    opponents = (
        Seat.objects.filter(game_id__in=mine)
        .exclude(bot=bot)
        .values_list("game_id", "team", "bot_id", "bot__name")
    )
    seen: set[tuple[int, int]] = set()
    for game_id, team, opponent_id, name in opponents:
        if team == mine[game_id] or (game_id, opponent_id) in seen:
            continue
        seen.add((game_id, opponent_id))
        row = records.setdefault(
            opponent_id,
            {"bot_id": opponent_id, "name": name, "games": 0, "wins": 0, "draws": 0, "losses": 0},
        )
        row["games"] += 1
        winner = winners[game_id]
        if winner is None:
            row["draws"] += 1
        elif winner == mine[game_id]:
            row["wins"] += 1
        else:
            row["losses"] += 1
    return sorted(records.values(), key=lambda row: (-row["games"], row["name"].lower()))
