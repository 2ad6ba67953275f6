"""Rated sets: what a finished match of a rated league gave each pair of bot versions.

When a match (one set, dealt afresh game by game) of a rated league finishes,
``rated_set_record`` stores what it gave each pair of bot versions, in the transaction that
finishes the match; ``services.baselines`` corrects it for the luck of its deals later. The
ladder's matches go the same way: a rated league's finished match *is* a rated set of its pool.
Each set recorded asks for a fit of its pool (``services.rating_fits``).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, QuerySet

from games.engine import Ruleset
from games.ratings.sets import GameFacts, fresh_set_pair_scores, game_participants
from tournaments import queueing
from tournaments.models import Bot, Game, Match, PairTotal, RatedSet, Seat, SetScore, VersionTotal
from tournaments.selectors.fixed import fixed_rows
from tournaments.services.baselines import deal_baseline_compute, rated_set_correct
from tournaments.services.bot_versions import match_version_ids
from tournaments.services.rating_fits import ratings_fit_request
from tournaments.services.tallies import counts_add, rows_insert


def rated_set_record(*, match: Match, games: Sequence[Game]) -> RatedSet | None:
    """Record a finished match as a rated set of its league's pool, when it counts.

    The public way in for every kind of rated play (rated leagues, the ladder): call it inside
    the transaction that marks the match finished (``services.matches.match_finish`` does), with
    the match's games in their order (their status, seating and result loaded: the caller has
    read them). It counts when the league is rated, every game of the set finished (none
    aborted), no bot was a no-show and every bot is still in rated play. Its games become
    ``rated``, each pair of bot versions gets its score by game points
    (``games.ratings.sets.fresh_set_pair_scores``: rated sets are dealt afresh),
    and the pool is refitted after the transaction commits. Returns None, writing nothing, when
    it does not count or was already recorded.
    """
    league = match.league
    if not league.rated or not games:
        return None
    if any(game.status != Game.Status.FINISHED for game in games):
        return None
    [(recorded, no_show)] = fixed_rows(_set_recorded_or_no_show, match.id)
    if recorded or no_show:
        return None
    bot_ids = sorted({bot_id for game in games for bot_id in game.seating})
    bots = list(
        Bot.objects.filter(id__in=bot_ids)
        .order_by("id")
        .only("rated_paused_at", "protocol_version")
    )
    if any(bot.rated_paused_at is not None for bot in bots):
        return None
    versions = match_version_ids(match=match, bots=bots)
    team_of = Ruleset.from_dict(league.ruleset).team_of
    facts = []
    for game in games:
        participants = game_participants(game.seating, team_of)
        facts.append(
            GameFacts(
                participants=tuple((versions[bot_id], team) for bot_id, team in participants),
                winner=game.winner,
                totals=tuple(game.totals),
                forfeit_team=None if game.forfeit is None else team_of(game.forfeit),
            )
        )
    rated_set = rated_set_store(
        match=match,
        pool=league.pool,
        games=len(games),
        version_ids=list(versions.values()),
        pair_twelfths=[(a, b, round(12 * s)) for a, b, s in fresh_set_pair_scores(facts)],
    )
    _games_rated(match.id)
    ratings_fit_request(pool=league.pool)
    # The baseline correction (services.baselines): one message values the set's deals (its
    # games send none) and corrects it (``rated_set_deals_value``).
    transaction.on_commit(lambda: queueing.set_correction_enqueue(match.id), robust=True)
    return rated_set


def rated_set_deals_value(*, match_id: int) -> RatedSet | None:
    """Value the deals of the match's rated set not valued yet, then correct the set: what the
    ``baselines.correct_set`` message that recording the set sends does. One message per set
    rather than one per game: sending one costs the match worker 0.75 ms of CPU, a tenth of
    storing the game (docs/benchmarks-journal.md, "Storing a game (2)"). A deal takes a few ms
    to value, so the set's correction waits little longer than it did. Returns the corrected
    set, or None (``rated_set_correct``)."""
    finished = Game.objects.filter(match_id=match_id, status=Game.Status.FINISHED)
    for game_id in finished.order_by("number").values_list("id", flat=True):
        deal_baseline_compute(game_id=game_id)
    return rated_set_correct(match_id=match_id)


def _games_rated(match_id: int) -> None:
    """Mark the match's games rated: a plain statement made here (a Django ``update()`` cost
    the match worker more CPU than the statement)."""
    meta = Game._meta
    quote = connection.ops.quote_name
    rated, match = (quote(meta.get_field(name).column) for name in ("rated", "match"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} SET {rated} = %s WHERE {match} = %s", [True, match_id]
        )


def _set_recorded_or_no_show(match_id: int) -> QuerySet:
    """Whether the match is recorded already, and whether a bot of it was a no-show: one fixed
    statement (``fixed_rows``)."""
    return Match.objects.filter(pk=match_id).values_list(
        Exists(RatedSet.objects.filter(match_id=OuterRef("pk"))),
        Exists(Seat.objects.filter(game__match_id=OuterRef("pk"), no_show=True)),
    )


def rated_set_store(
    *,
    match: Match,
    pool: str,
    games: int,
    version_ids: list[int],
    pair_twelfths: list[tuple[int, int, int]],
) -> RatedSet:
    """Write one rated set: its row, its players, each pair's score (``(player, opponent,
    twelfths)``, player < opponent) and the pool's running totals, which a fit reads.

    Call inside the transaction that records the set, so the totals never disagree with the
    ``SetScore`` rows. Rows are locked in one order (pairs, then versions, each ascending), so
    sets of shared bots recorded at once wait for each other instead of deadlocking.
    """
    rated_set = RatedSet.objects.create(match=match, pool=pool, games=games)
    # A new set has no players yet: one INSERT (``set()`` would read the empty list first).
    rows_insert(
        rows=[
            RatedSet.players.through(ratedset_id=rated_set.pk, botversion_id=version_id)
            for version_id in sorted(version_ids)
        ]
    )
    pairs = sorted(pair_twelfths)
    rows_insert(
        rows=[
            SetScore(rated_set=rated_set, pool=pool, player_id=a, opponent_id=b, twelfths=t)
            for a, b, t in pairs
        ]
    )
    # One statement per table makes each missing row and adds to the others under their locks,
    # in the order given (``services.tallies.counts_add``).
    counts_add(
        rows=[
            PairTotal(pool=pool, player_id=a, opponent_id=b, sets=1, twelfths=t)
            for a, b, t in pairs
        ],
        keys=["pool", "player", "opponent"],
        counts=["sets", "twelfths"],
    )
    counts_add(
        rows=[
            VersionTotal(pool=pool, version_id=version_id, sets=1, games=games)
            for version_id in sorted(version_ids)
        ],
        keys=["pool", "version"],
        counts=["sets", "games"],
    )
    return rated_set
