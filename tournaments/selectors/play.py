"""Reads of people's games (tournaments/services/play.py): a page's live version, and each
bot's record against people, which no rating counts."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from tournaments.models import Bot, Game, League, PersonGame, Seat
from tournaments.selectors.fixed import fixed_all, fixed_rows


def play_live_version(person_game_id: int) -> tuple[str, bool] | None:
    """What a person's page shows, as ``"moves:status:to_move"``, and whether the game is over;
    the ``play`` topic of the live streams (web/page_streams.py)."""
    row = (
        PersonGame.objects.filter(pk=person_game_id)
        .values_list("answers", "status", "person_to_move")
        .first()
    )
    if row is None:
        return None
    answers, status, to_move = row
    return f"{len(answers)}:{status}:{int(to_move)}", status == PersonGame.Status.FINISHED


def _against_people() -> QuerySet[Seat]:
    """Finished seats of bots in people's games, on the other team than the person's."""
    return Seat.objects.filter(
        game__person_game__isnull=False, game__status=Game.Status.FINISHED
    ).exclude(team=F("game__person_game__team"))


def _totals(seats: QuerySet[Seat]) -> QuerySet:
    return seats.values("bot_id").annotate(
        games=Count("id"),
        wins=Count("id", filter=Q(game__winner=F("team"))),
        draws=Count("id", filter=Q(game__winner__isnull=True)),
    )


def _bot_people_totals(bot_id: int) -> QuerySet:
    return _totals(_against_people().filter(bot_id=bot_id))


def bot_people_record(*, bot: Bot) -> dict[str, int]:
    """The bot's games against people: games, wins, draws, losses (from its point of view).
    A fixed statement (``fixed_rows``): a bot's page reads it on every request."""
    rows = fixed_rows(_bot_people_totals, bot.pk)
    games, wins, draws = rows[0][1:] if rows else (0, 0, 0)
    return {"games": games, "wins": wins, "draws": draws, "losses": games - wins - draws}


def _people_totals() -> QuerySet:
    return _totals(_against_people())


def people_records() -> dict[int, dict[str, int]]:
    """``bot_people_record`` of every bot that played people, by bot id (a ranking looks its
    bots up in it).

    One fixed statement (``fixed_all``): building it as a Django query on every request cost ten
    times running it (docs/benchmarks-journal.md, "Uncached API reads"). It counts every bot's
    seats, not the ranked ones' only: PostgreSQL plans the join with the ranking in more time
    than it takes to count the seats of people's games, which it scans either way.
    """
    return {
        bot_id: {"games": games, "wins": wins, "draws": draws, "losses": games - wins - draws}
        for bot_id, games, wins, draws in fixed_all(_people_totals)
    }


def person_game_of(*, person_game_id: int, person: Any) -> PersonGame | None:
    """The person's own game (anyone else's does not exist for them)."""
    if not getattr(person, "is_authenticated", False):
        return None
    return (
        PersonGame.objects.select_related("game__league")
        .filter(pk=person_game_id, person=person)
        .first()
    )


def with_people_record(ratings: QuerySet) -> QuerySet:
    """A ranking's rows (``Rating``) with each bot's record against people (``people_games``,
    ``people_wins``, ``people_draws``), so a ranking can be sorted by it."""
    seats = _against_people().filter(bot_id=OuterRef("bot_id")).order_by().values("bot_id")

    def count(condition: Q | None = None) -> Coalesce:
        counted = seats.annotate(n=Count("id", filter=condition)).values("n")
        return Coalesce(Subquery(counted, output_field=IntegerField()), 0)

    return ratings.annotate(
        people_games=count(),
        people_wins=count(Q(game__winner=F("team"))),
        people_draws=count(Q(game__winner__isnull=True)),
    )


def person_seat(*, game: Game) -> dict[int, str]:
    """The seat a person played in ``game`` and their name, ``{}`` in a game of bots only."""
    if game.league.kind != League.Kind.PLAY:
        return {}
    row = PersonGame.objects.filter(game=game).values_list("seat", "person__username").first()
    return {} if row is None else {row[0]: row[1]}


def with_people_rows(rows: list[dict[str, Any]], *, sort: bool = False) -> list[dict[str, Any]]:
    """A ranking page's rows with each bot's record against people (``people``); with
    ``sort``, most wins against people first, then most games, else the ranking's order."""
    records = people_records()
    none = {"games": 0, "wins": 0, "draws": 0, "losses": 0}
    rows = [{**row, "people": records.get(row["bot_id"], none)} for row in rows]
    if sort:
        rows.sort(key=lambda row: (-row["people"]["wins"], -row["people"]["games"]))
    return rows
