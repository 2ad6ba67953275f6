"""The hot read shapes as plain functions of plain rows: a dict per row, no model instance.

Each function answers exactly what its serializer in ``league_serializers`` / ``bot_serializers``
answers (same keys in the same order, same types; tests/performance/test_fast_rows.py compares
them on a filled database): the serializers stay to describe the fields in the OpenAPI schema
and to check input. Building a few hundred model instances and walking DRF's nested fields for
each was most of an uncached list's CPU (docs/benchmarks-journal.md, "Uncached API reads").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tournaments.models import League
from tournaments.observers import sight_of
from tournaments.selectors.leagues import (
    STANDING_COLUMNS,
    TALLY_COLUMNS,
    games_seats_rows,
    league_standings,
    leagues_bots_rows,
    progress_of,
    sets_games_rows,
)


def iso(value: datetime | None) -> str | None:
    """A time as DRF's ``DateTimeField`` writes it (ISO 8601 in UTC, ``Z`` for ``+00:00``)."""
    if not value:
        return None
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def games_represent(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of ``selectors.leagues.games_rows`` as ``GameSerializer`` shows them: their seats
    and their sets' games read in one query each."""
    seats = games_seats_rows([row["id"] for row in rows])
    sets = sets_games_rows(sorted({row["match_id"] for row in rows}))
    return [game_represent(row, seats[row["id"]], sets[row["match_id"]]) for row in rows]


def game_represent(
    row: dict[str, Any], seats: list[tuple], set_games: list[tuple[int, int, int, str]]
) -> dict[str, Any]:
    """One game: ``GameSerializer``'s fields, seats naming no bot while its sight says so
    (``observers.sight_of``, the rule of ``game_sight``)."""
    sight = sight_of(
        game_id=row["id"],
        status=row["status"],
        seed=row["seed"],
        match_status=row["match_status"],
        set_games=((game_id, seed, status) for game_id, _, seed, status in set_games),
        anonymous=bool(row["league_rated"]),
    )
    named = sight.seats_named
    finished = row["status"] == "finished"
    return {
        "id": row["id"],
        "league": row["league_id"],
        "match": row["match_id"],
        "status": row["status"],
        "seats": [seat_represent(seat, named) for seat in seats],
        "result": {
            "winner": row["winner"],
            "totals": row["totals"],
            "reason": row["reason"],
            "forfeit_seat": row["forfeit"],
        }
        if finished
        else None,
        "moves": row["moves"],
        "faults": row["fault_list"] or [],
        "no_show": any(seat[7] for seat in seats),
        "rated": row["rated"],
        "duplicate": {
            "match": row["match_id"],
            "number": row["number"],
            "of": len(set_games),
            "seed": row["seed"] if sight.record_shown else None,
            "games": [game_id for game_id, *_ in set_games],
        },
        "started_at": iso(row["started_at"]),
        "finished_at": iso(row["finished_at"]),
    }


def seat_represent(seat: tuple, named: bool) -> dict[str, Any]:
    """A seat (a tuple of ``selectors.leagues.games_seats_rows``) as
    ``SeatSerializer`` shows it; ``bot`` is null while the game may not name it."""
    number, team, bot_id, name, moves, faults, kinds, no_show, mean, p50, p95, high = seat
    return {
        "seat": number,
        "team": team,
        "bot": {"id": bot_id, "name": name} if named else None,
        "moves": moves,
        "faults": faults,
        "fault_kinds": kinds,
        "no_show": no_show,
        "latency_mean_ms": mean,
        "latency_p50_ms": p50,
        "latency_p95_ms": p95,
        "latency_max_ms": high,
    }


def leagues_represent(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of ``selectors.leagues.leagues_rows`` as ``LeagueSerializer`` shows them, their bots
    read in one query."""
    bots = leagues_bots_rows([row["id"] for row in rows])
    return [league_represent(row, bots[row["id"]]) for row in rows]


def league_represent(row: dict[str, Any], bots: list[tuple[int, str]]) -> dict[str, Any]:
    """One league: ``LeagueSerializer``'s fields."""
    return {
        "id": row["id"],
        "name": row["name"],
        "creator": row["creator_name"],
        "status": row["status"],
        "ruleset": row["ruleset"],
        "pool": row["pool"],
        "players": row["players"],
        "games_per_pairing": row["games_per_pairing"],
        "move_timeout_ms": row["move_timeout_ms"],
        "max_faults": row["max_faults"],
        "rated": row["rated"],
        "kind": row["kind"],
        "bots": [{"id": bot_id, "name": name} for bot_id, name in bots],
        "games_planned": row["games_planned"],
        "created_at": iso(row["created_at"]),
        "started_at": iso(row["started_at"]),
        "finished_at": iso(row["finished_at"]),
    }


def league_detail_represent(row: dict[str, Any]) -> dict[str, Any]:
    """A row of ``selectors.leagues.league_detail_rows`` with its progress and standings:
    ``LeagueDetailSerializer``'s fields."""
    bots = leagues_bots_rows([row["id"]])[row["id"]]
    answer = league_represent(row, bots)
    answer["progress"] = progress_of(**{name: row[f"tally_{name}"] or 0 for name in TALLY_COLUMNS})
    league = League(pk=row["id"], pool=row["pool"])  # what the standings read of it
    standings = league_standings(league, bots=bots)
    answer["standings"] = [standing_represent(standing) for standing in standings]
    return answer


def standing_represent(standing: dict[str, Any]) -> dict[str, Any]:
    """A row of ``selectors.leagues.league_standings`` as ``StandingSerializer`` shows it."""
    rating = standing["rating"]
    return {
        "bot_id": standing["bot_id"],
        "bot": standing["bot"],
        "points": float(standing["points"]),
        **{name: standing[name] for name in STANDING_COLUMNS},
        "rating": None if rating is None else float(rating),
        "provisional": standing["provisional"],
    }


def ranking_represent(row: dict[str, Any], people: dict[str, int] | None) -> dict[str, Any]:
    """A row of ``selectors.ratings.ranking_table`` with the bot's record against people
    (``selectors.play.people_records``; None: it never played people) as
    ``RankingRowSerializer`` shows it."""
    figures = _rating_figures(row)
    head = {name: figures.pop(name) for name in ("version", "pool")}
    return {
        "rank": row["rank"],
        "bot": row["bot_id"],
        "name": row["name"],
        **head,
        **figures,
        "updated_at": iso(row["updated_at"]),
        "people": people or {"games": 0, "wins": 0, "draws": 0, "losses": 0},
    }


def rating_represent(row: dict[str, Any]) -> dict[str, Any]:
    """A rating row of ``selectors.ratings.bot_public_rows`` as ``RatingSerializer`` shows it."""
    figures = _rating_figures(row)
    tail = {name: figures.pop(name) for name in RATING_TAIL}
    return {**figures, "rank": row["rank"], **tail}


RATING_TAIL = ("sets", "games", "los_next")


def _rating_figures(row: dict[str, Any]) -> dict[str, Any]:
    """A rating's figures as JSON numbers (ratings are stored as decimals), in the order
    ``RatingSerializer`` has them, without its rank."""
    los_next = row["los_next"]
    return {
        "pool": row["pool"],
        "version": row["version_name"],
        "rating": float(row["rating"]),
        "rating_low": float(row["rating_low"]),
        "rating_high": float(row["rating_high"]),
        "provisional": row["provisional"],
        "sets": row["sets"],
        "games": row["games"],
        "los_next": None if los_next is None else float(los_next),
    }


def bot_public_represent(
    bot: dict[str, Any], versions: list[dict[str, Any]], ratings: list[dict[str, Any]]
) -> dict[str, Any]:
    """A bot as anyone but its owner sees it: ``BotSerializer``'s public fields, from the rows
    of ``selectors.ratings.bot_public_rows`` (ratings by pool)."""
    current = bot["protocol_version"]
    return {
        "id": bot["id"],
        "name": bot["name"],
        "owner": bot["owner_name"],
        "description": bot["description"],
        "status": bot["status"],
        "health": bot["health"],
        "version": current,
        "accepts_challenges": bot["accepts_challenges"],
        "ratings": [rating_represent(r) for r in ratings if r["version_name"] == current],
        "versions": [
            {
                "version": version["version"],
                "current": version["version"] == current,
                "first_seen_at": iso(version["first_seen_at"]),
                "last_seen_at": iso(version["last_seen_at"]),
                "ratings": [
                    rating_represent(r) for r in ratings if r["version_id"] == version["id"]
                ],
            }
            for version in versions
            for version_id in [version["id"]]
        ],
        "rated_play": bot["rated_paused_at"] is None,
        "no_shows": bot["no_shows"],
        "no_shows_in_row": bot["no_shows_in_row"],
        "created_at": iso(bot["created_at"]),
    }
