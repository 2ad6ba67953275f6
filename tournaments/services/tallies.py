"""Each league's running totals (``tournaments.models.tallies``): progress, standings, crosstable.

Called inside the transactions that write what they total: ``league_tally_add`` when games are
written, ``tallies_game_finished`` / ``tallies_game_aborted`` when one is stored,
``tallies_set_finished`` when a duplicate set ends. Each table is added to by one statement,
``counts_add``'s ``INSERT ... ON CONFLICT DO UPDATE``, which makes a missing row (one another
transaction is making is waited for) and adds to an existing one under its lock, row by row in
the order given, always the same (tally, standings by bot, cells by pair), so two games of one
league stored at once wait for each other instead of deadlocking. ``tallies_rebuild`` counts
everything afresh from the games (the migration that made the rows fills them with it; the
tests compare the two).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from django.apps import apps as django_apps
from django.db import connection
from django.db.models import Model

from games.engine import Ruleset, RulesetError
from games.ratings.sets import GameFacts, crosstable_cells, set_outcomes
from tournaments.models import Game, LeaguePair, LeagueStanding, LeagueTally, Match, Seat
from tournaments.selectors.leagues import facts_of, game_facts

SET_COLUMNS = {"won": "sets_won", "drawn": "sets_drawn", "lost": "sets_lost"}


def counts_add(*, rows: Sequence[Model], keys: Sequence[str], counts: Sequence[str]) -> None:
    """Insert each of ``rows`` (one model's), or, where a row with the same ``keys`` is there,
    add its ``counts`` columns to that row's: one statement instead of an insert and an
    ``UPDATE ... SET x = x + n`` per row, which cost the league worker more CPU than the game's
    other rows (docs/benchmarks.md, "Leagues").

    PostgreSQL and SQLite take the rows in the order given and wait for a conflicting row
    another transaction is inserting, so callers pass them sorted, as the lock order asks.
    """
    if not rows:
        return
    meta = rows[0]._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    columns = [quote(meta.get_field(name).column) for name in counts]
    rows_insert(
        rows=rows,
        then=(
            f" ON CONFLICT ({', '.join(quote(meta.get_field(name).column) for name in keys)}) "
            f"DO UPDATE SET {', '.join(f'{c} = {table}.{c} + EXCLUDED.{c}' for c in columns)}"
        ),
    )


def rows_insert(*, rows: Sequence[Model], then: str = "") -> None:
    """Insert ``rows`` (one model's) in one statement made here (``then``: its ``ON CONFLICT``
    clause, if any), their values prepared as ``bulk_create`` prepares them, and nothing read
    back (an auto key is the database's, not set on the rows): Django's insert, its
    ``RETURNING`` and its objects cost the league worker more CPU than the statement
    (docs/benchmarks-journal.md, "Storing a game (2)")."""
    if not rows:
        return
    meta = rows[0]._meta
    fields = [field for field in meta.concrete_fields if field is not meta.auto_field]
    quote = connection.ops.quote_name
    one_row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (
        f"INSERT INTO {quote(meta.db_table)} "
        f"({', '.join(quote(field.column) for field in fields)}) "
        f"VALUES {', '.join([one_row] * len(rows))}{then}"
    )
    params = [
        field.get_db_prep_save(field.pre_save(row, True), connection)
        for row in rows
        for field in fields
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def rows_update(*, rows: Sequence[Model], fields: Sequence[str]) -> None:
    """Write ``fields`` of each of ``rows`` (one model's) to its row: one ``UPDATE ... WHERE
    pk = %s`` made here, sent for every row at once, its values prepared as Django's
    ``update()`` prepares them. Django's ``save()`` or ``update()`` per row, or
    ``bulk_update``'s CASE per field per row, cost the league worker more CPU than the statement
    (docs/benchmarks-journal.md, "Storing a game (2)"). Rows are updated in the order given."""
    if not rows:
        return
    meta = rows[0]._meta
    written = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    sql = (
        f"UPDATE {quote(meta.db_table)} SET "
        f"{', '.join(f'{quote(field.column)} = %s' for field in written)} "
        f"WHERE {quote(meta.pk.column)} = %s"
    )
    params = [
        [
            *(field.get_db_prep_save(getattr(row, field.attname), connection) for field in written),
            row.pk,
        ]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def league_tally_add(
    *, league_id: int, games: int = 0, finished: int = 0, aborted: int = 0, faults: int = 0
) -> None:
    """Add to the league's counts of games written, finished and aborted, and of faults."""
    counts_add(
        rows=[
            LeagueTally(
                league_id=league_id, games=games, finished=finished, aborted=aborted, faults=faults
            )
        ],
        keys=["league"],
        counts=["games", "finished", "aborted", "faults"],
    )


def _standing_lines(facts: GameFacts, seats: Iterable[Seat]) -> dict[int, dict[str, int]]:
    """What one finished game adds to each of its bots' lines."""
    faults: dict[int, int] = defaultdict(int)
    for seat in seats:
        faults[seat.bot_id] += seat.faults
    lines = {}
    for bot_id, team in facts.participants:
        won, drawn = facts.winner == team, facts.winner is None
        lines[bot_id] = {
            "games": 1,
            "wins": int(won),
            "draws": int(drawn),
            "losses": int(not won and not drawn),
            "points_for": facts.totals[team],
            "points_against": sum(facts.totals) - facts.totals[team],
            "faults": faults[bot_id],
        }
    return lines


STANDING_COUNTS = (
    "games", "wins", "draws", "losses", "points_for", "points_against", "faults",
    *SET_COLUMNS.values(),
)  # fmt: skip


def _standings_add(league_id: int, lines: dict[int, dict[str, int]]) -> None:
    counts_add(
        rows=[
            LeagueStanding(league_id=league_id, bot_id=bot_id, **lines[bot_id])
            for bot_id in sorted(lines)
        ],
        keys=["league", "bot"],
        counts=STANDING_COUNTS,
    )


def _pairs_add(league_id: int, cells: dict[tuple[int, int], tuple[float, int]]) -> None:
    counts_add(
        rows=[
            LeaguePair(league_id=league_id, bot_id=a, opponent_id=b, score=score, games=games)
            for (a, b), (score, games) in sorted(cells.items())
        ],
        keys=["league", "bot", "opponent"],
        counts=["score", "games"],
    )


def tallies_game_finished(*, game: Game, seats: Sequence[Seat]) -> None:
    """Count a game just stored as finished (its ``seats`` carry their faults)."""
    league_tally_add(league_id=game.league_id, finished=1, faults=game.faults)
    facts = game_facts(game, Ruleset.from_dict(game.league.ruleset).team_of)
    _standings_add(game.league_id, _standing_lines(facts, seats))
    _pairs_add(game.league_id, crosstable_cells([facts]))


def tallies_game_aborted(*, game: Game) -> None:
    """Count a game closed without a result (it ran past the match's time limit)."""
    league_tally_add(league_id=game.league_id, aborted=1)


# What ``tallies_set_finished`` reads of a set's games. ``match_id`` too: the match's related
# manager sets each game's match from it (deferred, it would cost a query a game).
SET_GAME_FIELDS = (
    "id", "league_id", "match_id", "number", "status", "seating", "winner", "totals", "forfeit"
)  # fmt: skip


def tallies_set_finished(*, match: Match, games: Sequence[Game]) -> None:
    """Count a duplicate set that just ended in its bots' sets won, drawn and lost (``games``:
    the match's, in their order, with ``SET_GAME_FIELDS`` loaded; the caller has read them)."""
    team_of = Ruleset.from_dict(match.league.ruleset).team_of
    finished = [game for game in games if game.status == Game.Status.FINISHED]
    outcomes = set_outcomes([game_facts(game, team_of) for game in finished])
    lines = {bot_id: {SET_COLUMNS[outcome]: 1} for bot_id, outcome in outcomes.items()}
    _standings_add(match.league_id, lines)


def tallies_rebuild(
    *, league_ids: list[int] | None = None, get_model: Callable = django_apps.get_model
) -> None:
    """Count every league's totals afresh from its games (``league_ids``: only these leagues).

    ``get_model`` gives the model classes (a migration passes its historical ``apps``).
    """
    model = {name: get_model("tournaments", name) for name in (
        "League", "Game", "Seat", "LeagueTally", "LeagueStanding", "LeaguePair"
    )}  # fmt: skip
    leagues = model["League"].objects.order_by("id")
    if league_ids is not None:
        leagues = leagues.filter(id__in=league_ids)
    for league_id, ruleset in leagues.values_list("id", "ruleset").iterator():
        _rebuild_league(model, league_id, _team_of(ruleset))


def _team_of(ruleset: dict) -> Callable[[int], int]:
    """The ruleset's teams. A stored ruleset the engine no longer reads (a row older than the
    rulesets' version field, as old migrations' test data holds) counts a team per seat, as
    every table without partnerships does."""
    try:
        return Ruleset.from_dict(ruleset).team_of
    except RulesetError:
        return lambda seat: seat


def _rebuild_league(model: dict, league_id: int, team_of: Callable[[int], int]) -> None:
    for name in ("LeagueTally", "LeagueStanding", "LeaguePair"):
        model[name].objects.filter(league_id=league_id).delete()
    games = model["Game"].objects.filter(league_id=league_id).order_by("id")
    rows = list(
        games.values_list(
            "id", "match_id", "status", "seating", "winner", "totals", "forfeit", "faults",
            "match__status",
        )
    )  # fmt: skip
    if not rows:
        return
    seat_faults: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    seats = model["Seat"].objects.filter(game__league_id=league_id, game__status="finished")
    for game_id, bot_id, faults in seats.values_list("game_id", "bot_id", "faults"):
        seat_faults[game_id][bot_id] += faults
    tally = model["LeagueTally"](league_id=league_id, games=len(rows))
    lines: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cells: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0])
    sets: dict[int, list[GameFacts]] = defaultdict(list)
    for _id, match_id, status, seating, winner, totals, forfeit, faults, match_status in rows:
        if status == "aborted":
            tally.aborted += 1
        if status != "finished":
            continue
        tally.finished += 1
        tally.faults += faults
        if None in seating:  # a person's seat (services.play): no standings, no crosstable
            continue
        if totals is None:  # a row with no result to count (old migrations' test data)
            continue
        facts = facts_of(seating, winner, totals, forfeit, team_of)
        for bot_id, line in _standing_lines(facts, []).items():
            line["faults"] = seat_faults[_id][bot_id]
            for name, value in line.items():
                lines[bot_id][name] += value
        for pair, (score, met) in crosstable_cells([facts]).items():
            cells[pair][0] += score
            cells[pair][1] += met
        if match_status == "finished":
            sets[match_id].append(facts)
    for played in sets.values():
        for bot_id, outcome in set_outcomes(played).items():
            lines[bot_id][SET_COLUMNS[outcome]] += 1
    tally.save()
    model["LeagueStanding"].objects.bulk_create(
        model["LeagueStanding"](league_id=league_id, bot_id=bot_id, **line)
        for bot_id, line in lines.items()
    )
    model["LeaguePair"].objects.bulk_create(
        model["LeaguePair"](league_id=league_id, bot_id=a, opponent_id=b, score=s, games=g)
        for (a, b), (s, g) in cells.items()
    )
