"""The running totals a fit reads: always the rated sets summed, whatever order they came in.

A fit reads one ``PairTotal`` row per pair and one ``VersionTotal`` row per bot version instead
of every ``SetScore`` (services.rating_fits.pool_totals). These tests record random duplicate sets
(two or three bots, random pair scores and game counts) through ``rated_set_store``, the very
function ``rated_set_record`` writes with, and compare the totals, and the fit made from them,
with the sums of the rated sets read afresh; the same sets recorded in another order into a
second pool must give the same totals and the same published figures to the cent.
"""

import itertools

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tournaments.models import League, Match, PairTotal, VersionTotal
from tournaments.services.bot_versions import bot_version_current
from tournaments.services.rated_sets import rated_set_store
from tournaments.services.rating_fits import (
    pool_fit_compute,
    pool_totals,
    pool_totals_from_sets,
    ratings_fit,
    ratings_recompute,
)

pytestmark = pytest.mark.django_db

BOTS = 4
_pools = itertools.count(1)
_matches = itertools.count(1)
_leagues = itertools.count(1)  # league names are unique

# One set: which bots played (2 or 3 of BOTS), its games, and a score in twelfths per pair.
SET = st.tuples(
    st.lists(st.integers(0, BOTS - 1), min_size=2, max_size=3, unique=True),
    st.integers(2, 3),
    st.lists(st.integers(0, 12), min_size=3, max_size=3),
)
SETS = st.lists(SET, min_size=1, max_size=25)


@pytest.fixture
def versions(make_rated_bot) -> list[int]:
    return [bot_version_current(bot=make_rated_bot("greedy")).id for _ in range(BOTS)]


def record(staff, pool: str, versions: list[int], sets) -> None:
    league = League.objects.create(
        name=f"totals {pool} {next(_leagues)}", creator=staff, ruleset={"name": "classic"},
        pool=pool, players=2, rated=True, seed=1, status=League.Status.FINISHED,
    )  # fmt: skip
    for players, games, scores in sets:
        number = next(_matches)
        match = Match.objects.create(
            league=league, number=number, round=1, seed=number, status=Match.Status.FINISHED
        )
        ids = sorted(versions[p] for p in players)
        pairs = list(itertools.combinations(ids, 2))
        rated_set_store(
            match=match,
            pool=pool,
            games=games,
            version_ids=ids,
            pair_twelfths=[(a, b, t) for (a, b), t in zip(pairs, scores, strict=False)],
        )


def published(pool: str) -> dict[int, tuple]:
    return {entry.version_id: entry.published() for entry in pool_fit_compute(pool=pool).entries}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sets=SETS, rng=st.randoms(use_true_random=False))
def test_totals_are_the_rated_sets_summed_in_any_order(staff, versions, sets, rng):
    first, second = f"t{next(_pools)}/2p", f"t{next(_pools)}/2p"
    shuffled = list(sets)
    rng.shuffle(shuffled)
    record(staff, first, versions, sets)
    record(staff, second, versions, shuffled)

    totals = pool_totals(pool=first)
    assert totals == pool_totals_from_sets(pool=first)
    assert totals == pool_totals(pool=second)
    pairs, per_version = totals
    assert sum(n for _, _, n, *_ in pairs) == sum(len(p) * (len(p) - 1) // 2 for p, _, _ in sets)
    assert sum(v["sets"] for v in per_version.values()) == sum(len(p) for p, _, _ in sets)

    from_totals = published(first)
    assert from_totals == {
        entry.version_id: entry.published()
        for entry in pool_fit_compute(pool=first, from_sets=True).entries
    }
    assert from_totals == published(second)


def test_the_fit_reads_the_totals_not_the_sets(staff, versions):
    """A fit's queries do not grow with the sets, and what it reads is the totals: a total
    changed by hand changes the fit."""
    pool = "classic/2p"
    record(staff, pool, versions, [([0, 1], 2, [12, 0, 0])] * 5)
    with CaptureQueriesContext(connection) as few:
        published(pool)
    record(staff, pool, versions, [([0, 1], 2, [12, 0, 0]), ([1, 2], 2, [6, 0, 0])] * 20)
    with CaptureQueriesContext(connection) as many:
        before = published(pool)
    assert len(many) == len(few)
    assert not any("setscore" in query["sql"].lower() for query in many.captured_queries)

    PairTotal.objects.filter(pool=pool, player_id=versions[0]).update(twelfths=0)
    after = published(pool)
    assert after[versions[0]][0] < before[versions[0]][0]


def test_recompute_reports_and_rebuilds_totals_that_differ(staff, versions):
    pool = "classic/2p"
    record(staff, pool, versions, [([0, 1], 2, [12, 0, 0]), ([1, 2, 3], 3, [6, 0, 12])])
    ratings_fit(pool=pool)
    assert ratings_recompute().exact
    VersionTotal.objects.filter(pool=pool, version_id=versions[1]).update(games=99)
    PairTotal.objects.filter(pool=pool).first().delete()

    assert ratings_recompute().mismatches == [f"{pool}: running totals differ from its rated sets"]
    with pytest.raises(CommandError):
        call_command("ratings_recompute")
    call_command("ratings_recompute", "--write")
    assert pool_totals(pool=pool) == pool_totals_from_sets(pool=pool)
    assert ratings_recompute().exact
