"""Rated sets made straight in the database, for tests of the fit and what publishes it.

Playing real games is the league tests' business (and slow); here a set is its recorded outcome:
``record_sets(pool, [(bot_a, bot_b, a's score), ...])`` writes one finished match of a rated
league and its ``RatedSet`` per result through ``services.rated_sets.rated_set_store``, as
``rated_set_record`` does, without the games, then fits the pool as the task would
(``fit=False``: not yet).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence

import pytest

from tests.leagues.conftest import example_servers, make_bot, make_rated_bot, staff  # noqa: F401

_numbers = itertools.count(1)


@pytest.fixture
def record_sets(staff) -> Callable[..., list]:  # noqa: F811
    from django.db import transaction

    from tournaments.models import League, Match
    from tournaments.services.bot_versions import bot_version_current
    from tournaments.services.rated_sets import rated_set_store
    from tournaments.services.rating_fits import ratings_fit

    leagues: dict[str, League] = {}

    def record(pool: str, results: Sequence[tuple[object, object, float]], fit=True) -> list:
        ruleset, _, size = pool.partition("/")
        league = leagues.get(pool) or League.objects.create(
            name=f"sets {pool}",
            creator=staff,
            ruleset={"name": ruleset},
            pool=pool,
            players=int(size.rstrip("p")),
            rated=True,
            seed=1,
            status=League.Status.FINISHED,
        )
        leagues[pool] = league
        made = []
        # One transaction for the batch: a set is written in one, as ``rated_set_record`` does,
        # and a commit per row (each an fsync of the SQLite file) was most of these tests' time.
        with transaction.atomic():
            for a, b, score in results:
                number = next(_numbers)
                match = Match.objects.create(
                    league=league, number=number, round=1, seed=number, status=Match.Status.FINISHED
                )
                match.bots.set([a, b])
                va, vb = bot_version_current(bot=a), bot_version_current(bot=b)
                if va.id > vb.id:
                    va, vb, score = vb, va, 1 - score
                rated = rated_set_store(
                    match=match,
                    pool=pool,
                    games=2,
                    version_ids=[va.id, vb.id],
                    pair_twelfths=[(va.id, vb.id, round(12 * score))],
                )
                made.append(rated)
        if fit:
            ratings_fit(pool=pool)
        return made

    return record


def ratings_settled() -> bool:
    """Every rated set corrected for the luck of its deals (services.baselines), and the
    published ratings exactly a fit of the sets: what a test with a real worker waits for.

    Meanwhile it does what beat does in production (no beat runs beside the tests' workers):
    while not settled, every few seconds the sweep sends again what a killed worker lost: the
    valuations, the corrections and the fits. A fit killed mid-way holds its pool's lease until
    it runs out, and the fit requests sent meanwhile give way to it; only a later request, as the
    sweep's, fits the pool again."""
    from tournaments.models import RatedSet
    from tournaments.services.baselines import baselines_sweep
    from tournaments.services.rating_fits import ratings_recompute, ratings_sweep

    settled = (
        not RatedSet.objects.filter(corrected_at__isnull=True).exists()
        and ratings_recompute().exact
    )
    if not settled and time.monotonic() - _last_sweep[0] > SWEEP_EVERY_S:
        _last_sweep[0] = time.monotonic()
        baselines_sweep(older_than_s=SWEEP_EVERY_S)
        ratings_sweep()
    return settled


def ratings_unsettled() -> str:
    """Why ``ratings_settled`` is false, for a test's failure message: each uncorrected set with
    its games' states and values, and the recomputation's differences."""
    from tournaments.models import Game, RatedSet
    from tournaments.services.rating_fits import ratings_recompute

    lines = []
    for rated_set in RatedSet.objects.filter(corrected_at__isnull=True)[:10]:
        games = Game.objects.filter(match_id=rated_set.match_id).select_related("baseline")
        states = [
            f"game {g.id} {g.status} seed {g.seed} value "
            f"{getattr(getattr(g, 'baseline', None), 'seed', None)}"
            for g in games
        ]
        lines.append(f"set {rated_set.id} (match {rated_set.match_id}) uncorrected: {states}")
    lines += ratings_recompute().mismatches[:10]
    return "; ".join(lines) or "settled"


# Beat sweeps every ESCOBA_SWEEP_INTERVAL_S (a minute); a test waits on it, so it sweeps sooner.
# The sweep re-sends only what has waited this long, and what it sends twice is done once.
SWEEP_EVERY_S = 2.0
_last_sweep = [0.0]
