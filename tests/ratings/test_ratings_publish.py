"""What a fit publishes: ranking order, provisional marks, LOS, history, API shapes, coalescing."""

import random
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.db.models import F
from django.utils import timezone
from rest_framework.test import APIClient

from tournaments import redis_locks
from tournaments.models import PairTotal, RatedSet, Rating, RatingFit, RatingPoint, SetScore
from tournaments.selectors.leagues import league_standings
from tournaments.selectors.ratings import bot_rating_series, pool_standing, ranking_rows
from tournaments.services import rating_fits
from tournaments.services.rating_fits import (
    ratings_fit,
    ratings_fit_coalesced,
    ratings_recompute,
    ratings_sweep,
)

pytestmark = pytest.mark.django_db(transaction=True)

RANKING_FIELDS = {
    "bot", "name", "version", "rating", "rating_low", "rating_high", "provisional", "sets",
    "games", "los_next",
}  # fmt: skip


def test_provisional_bots_are_marked_and_ranked_after_established_ones(
    make_rated_bot, record_sets, settings
):
    settings.ESCOBA_PROVISIONAL_HALF_WIDTH = 150
    a, b, c = (make_rated_bot("greedy") for _ in range(3))
    newcomer = make_rated_bot("expert")
    rng = random.Random(1)
    results = [(a, b, float(rng.random() < 0.6)) for _ in range(60)]
    results += [(b, c, float(rng.random() < 0.6)) for _ in range(60)]
    results += [(a, c, float(rng.random() < 0.7)) for _ in range(60)]
    results += [(newcomer, c, 1.0), (newcomer, b, 1.0)]  # two wins: high, but unsure
    record_sets("classic/2p", results)

    rows = ranking_rows(pool="classic/2p")
    assert [row["provisional"] for row in rows] == [False, False, False, True]
    assert rows[-1]["bot"] == newcomer.id
    assert rows[-1]["rating"] > rows[0]["rating"]  # higher, yet ranked after the established
    established = [row["rating"] for row in rows[:3]]
    assert established == sorted(established, reverse=True)
    assert [row["rank"] for row in rows] == [1, 2, 3, 4]
    assert all(0 <= row["los_next"] <= 1 for row in rows[:3]) and rows[-1]["los_next"] is None
    assert rows[0]["los_next"] > 0.5  # each established bot is likely above the next one
    for row in rows:
        assert row["rating_low"] < row["rating"] < row["rating_high"]
        half = (row["rating_high"] - row["rating_low"]) / 2
        assert (half > 150) == row["provisional"]
    assert rows[-1]["sets"] == 2 and rows[-1]["games"] == 4
    standing = pool_standing("classic/2p")  # what the ladder's matchmaker reads
    assert set(standing) == {a.id, b.id, c.id, newcomer.id}
    assert standing[newcomer.id]["provisional"] and standing[newcomer.id]["half_width"] > 150


def test_the_same_sets_in_any_order_publish_the_same_ratings(make_rated_bot, record_sets):
    bots = [make_rated_bot("greedy") for _ in range(4)]
    rng = random.Random(7)
    results = [
        (x, y, rng.choice([0.0, 0.5, 1.0]))
        for _ in range(30)
        for x, y in [tuple(rng.sample(bots, 2))]
    ]
    shuffled = list(results)
    rng.shuffle(shuffled)
    mirrored = [(y, x, 1 - s) for x, y, s in shuffled]  # and each from the other side
    record_sets("classic/2p", results)
    record_sets("fournier/2p", mirrored)

    def published(pool):
        return {
            r.bot_id: (r.rating, r.rating_low, r.rating_high, r.provisional, r.sets, r.rank)
            for r in Rating.objects.filter(pool=pool)
        }

    assert published("classic/2p") == published("fournier/2p")
    assert ratings_recompute().exact


def test_rankings_api_contract_json_numbers_and_history(make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0), (a, b, 0.5)])
    record_sets("classic/2p", [(a, b, 1.0)])
    api = APIClient()
    body = api.get("/api/rankings/?pool=classic/2p").json()
    assert body["count"] == 2
    for row in body["results"]:
        assert RANKING_FIELDS <= set(row)
        assert isinstance(row["bot"], int) and isinstance(row["sets"], int)
        for name in ("rating", "rating_low", "rating_high"):
            assert isinstance(row[name], float)  # numbers, never strings
        assert isinstance(row["provisional"], bool)
    top = body["results"][0]
    assert top["bot"] == a.id and top["sets"] == 3 and top["games"] == 6
    assert isinstance(top["los_next"], float) and body["results"][1]["los_next"] is None

    history = api.get(f"/api/rankings/history/?bot={a.id}&pool=classic/2p").json()
    assert history["count"] == 2  # one point per fit that moved it
    assert [p["sets"] for p in history["results"]] == [2, 3]
    assert history["results"][-1]["rating"] == top["rating"]
    series = bot_rating_series(a, "classic/2p")
    assert len(series) == 1 and len(series[0]["points"]) == 2 and series[0]["current"]

    public = api.get(f"/api/bots/{a.id}/").json()
    (rating,) = public["ratings"]
    assert rating["rating"] == top["rating"] and isinstance(rating["rating"], float)
    assert rating["rank"] == 1 and rating["provisional"] is True


def test_history_keeps_a_point_only_when_a_rating_moved(make_rated_bot, record_sets):
    a, b, c = (make_rated_bot("greedy") for _ in range(3))
    record_sets("classic/2p", [(a, b, 1.0)] * 4)
    points = RatingPoint.objects.count()
    ratings_fit(pool="classic/2p")  # nothing new: no point added
    assert RatingPoint.objects.count() == points
    record_sets("classic/2p", [(c, b, 1.0)])  # a moves a little, b and c take part
    assert set(
        RatingPoint.objects.filter(fit=RatingFit.objects.first()).values_list("bot_id", flat=True)
    ) >= {b.id, c.id}


def test_league_standings_show_the_pool_rating_not_a_second_elo(staff, make_rated_bot, record_sets):
    from tournaments.services.league_creation import league_create

    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0)] * 3)
    league = league_create(creator=staff, name="friendly", bot_ids=[a.id, b.id])
    rows = {row["bot_id"]: row for row in league_standings(league)}
    assert rows[a.id]["rating"] == float(Rating.objects.get(bot=a).rating)
    assert rows[a.id]["provisional"] is True
    assert not {"elo", "elo_low", "elo_high"} & set(rows[a.id])


def test_a_fit_requested_while_one_runs_is_run_by_the_holder(
    make_rated_bot, record_sets, monkeypatch
):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0)], fit=False)
    pool = "classic/2p"
    fits = []
    real = rating_fits.ratings_fit

    def fit_and_meanwhile(**kwargs):
        fits.append(kwargs["pool"])
        if len(fits) == 1:
            # a result arrives during the first fit: its own task finds the pool locked
            cache.set(rating_fits._dirty_key(pool), 1, None)
            assert ratings_fit_coalesced(pool=pool) == 0
        return real(**kwargs)

    monkeypatch.setattr(rating_fits, "ratings_fit", fit_and_meanwhile)
    cache.set(rating_fits._dirty_key(pool), 1, None)
    assert ratings_fit_coalesced(pool=pool) == 2  # the holder fitted again for it
    assert fits == [pool, pool]
    assert ratings_fit_coalesced(pool=pool) == 0  # nothing dirty: nothing to do
    with redis_locks.held(rating_fits._lock_key(pool), 1) as lease:
        assert lease is not None  # the holder let the pool go


def test_a_lock_left_by_a_killed_holder_frees_the_pool_after_its_lease(
    make_rated_bot, record_sets, monkeypatch
):
    monkeypatch.setattr(rating_fits, "FIT_LEASE_S", 1)
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0)], fit=False)
    pool = "classic/2p"
    # A worker child killed mid-fit leaves its lock behind: fits return at once while it lasts.
    assert redis_locks.Lease(rating_fits._lock_key(pool), rating_fits.FIT_LEASE_S).acquire()
    assert ratings_fit_coalesced(pool=pool) == 0
    assert not ratings_recompute().exact
    time.sleep(1.2)
    assert ratings_sweep() == [pool]  # eager Celery: the fit it sends runs at once
    assert ratings_recompute().exact


def test_a_holder_renews_its_lease_so_long_runs_of_fits_stay_one_at_a_time(
    make_rated_bot, record_sets, monkeypatch
):
    monkeypatch.setattr(rating_fits, "FIT_LEASE_S", 1)
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0)], fit=False)
    pool = "classic/2p"
    fits, overlapping = [], []
    real = rating_fits.ratings_fit

    def slow_fit_while_results_arrive(**kwargs):
        fits.append(kwargs["pool"])
        time.sleep(0.6)  # three of these outlast one lease
        if len(fits) <= 3:
            cache.set(rating_fits._dirty_key(pool), 1, None)  # a result recorded meanwhile
        if len(fits) == 3:
            overlapping.append(ratings_fit_coalesced(pool=pool))  # and its task arrives now
        return real(**kwargs)

    monkeypatch.setattr(rating_fits, "ratings_fit", slow_fit_while_results_arrive)
    cache.set(rating_fits._dirty_key(pool), 1, None)
    assert ratings_fit_coalesced(pool=pool) == 4  # the holder fitted for every result
    assert overlapping == [0], "a second fit ran while the holder was still fitting"
    assert ratings_recompute().exact


def test_a_fit_overtaken_by_a_fit_of_newer_sets_is_not_published(make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    pool = "classic/2p"
    record_sets(pool, [(a, b, 1.0)])
    # A holder reads the pool and stalls past its lease; two more sets arrive meanwhile and the
    # task that took the pool over fits and publishes them; then the stalled holder wakes up.
    stalled = rating_fits.pool_fit_compute(pool=pool)
    record_sets(pool, [(a, b, 0.0), (a, b, 0.0)], fit=False)
    newer = ratings_fit(pool=pool)
    points = RatingPoint.objects.count()
    assert rating_fits.pool_fit_publish(result=stalled) is None
    assert RatingFit.objects.filter(pool=pool).latest("id") == newer
    assert Rating.objects.get(bot=a).sets == 3
    assert RatingPoint.objects.count() == points, "the stale fit added history points"
    assert ratings_recompute().exact
    assert ratings_sweep() == []


def _correct_by_hand(rated_set: RatedSet, correction: int) -> None:
    """What ``baselines.rated_set_correct`` writes for a set of one pair: its score's
    correction, the pair's running total and the set's mark."""
    score = SetScore.objects.get(rated_set=rated_set)
    SetScore.objects.filter(pk=score.pk).update(correction=correction)
    PairTotal.objects.filter(
        pool=rated_set.pool, player_id=score.player_id, opponent_id=score.opponent_id
    ).update(correction=F("correction") + correction)
    RatedSet.objects.filter(pk=rated_set.pk).update(corrected_at=timezone.now())


def test_a_fit_overtaken_by_a_fit_of_newer_corrections_is_not_published(
    make_rated_bot, record_sets
):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    pool = "classic/2p"
    first, second = record_sets(pool, [(a, b, 1.0), (a, b, 0.5)])
    # A correction changes a set's score, not the highest set id: the stalled holder read the
    # same sets as the fit that took over, but not its corrections.
    stalled = rating_fits.pool_fit_compute(pool=pool)
    _correct_by_hand(first, -300_000)
    _correct_by_hand(second, 200_000)
    newer = ratings_fit(pool=pool)
    assert newer.corrected_sets == 2 and newer.last_set_id == stalled.last_set_id
    assert rating_fits.pool_fit_publish(result=stalled) is None
    assert RatingFit.objects.filter(pool=pool).latest("id") == newer
    assert ratings_recompute().exact
    assert ratings_sweep() == []


def test_the_sweep_refits_pools_with_corrections_newer_than_their_fit(make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    (rated_set,) = record_sets("classic/2p", [(a, b, 1.0)])
    before = Rating.objects.get(bot=a).rating
    _correct_by_hand(rated_set, -400_000)  # and the fit it requested was lost
    assert not ratings_recompute().exact
    assert ratings_sweep() == ["classic/2p"]  # eager Celery: fitted at once
    assert Rating.objects.get(bot=a).rating < before
    assert ratings_recompute().exact
    assert ratings_sweep() == []


def test_a_fit_of_fewer_sets_is_published_when_no_fit_came_between(make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    pool = "classic/2p"
    record_sets(pool, [(a, b, 1.0), (a, b, 1.0)])
    RatedSet.objects.filter(pool=pool).latest("id").delete()  # a set deleted by hand
    assert not ratings_recompute().exact
    assert not ratings_recompute(write=True).exact  # it reports what it mended
    assert Rating.objects.get(bot=a).sets == 1
    assert ratings_recompute().exact


def test_the_sweep_refits_pools_with_sets_newer_than_their_fit(make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0)])
    assert ratings_sweep() == []
    record_sets("classic/2p", [(a, b, 1.0)], fit=False)  # its fit task was lost
    assert ratings_sweep() == ["classic/2p"]  # eager Celery: fitted at once
    assert Rating.objects.get(bot=a).sets == 2
    assert ratings_sweep() == []


def test_recompute_command_is_the_same_fit(make_rated_bot, record_sets):
    from io import StringIO

    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    record_sets("classic/2p", [(a, b, 1.0), (a, b, 0.0), (a, b, 1.0)])
    out = StringIO()
    call_command("ratings_recompute", "--pool", "classic/2p", stdout=out)
    assert "3 rated sets fitted" in out.getvalue() and "reproduced exactly" in out.getvalue()


def test_admin_shows_versions_provisional_and_no_shows(client, make_rated_bot, record_sets):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    a.no_shows, a.no_shows_in_row = 4, 1
    a.save()
    record_sets("classic/2p", [(a, b, 1.0)])
    admin = get_user_model().objects.create_superuser("root", "", "pw")
    client.force_login(admin)
    bots = client.get("/admin/tournaments/bot/").content.decode()
    assert "Rated play" in bots and "No shows in row" in bots
    assert client.get(f"/admin/tournaments/bot/{a.id}/change/").status_code == 200
    ratings = client.get("/admin/tournaments/rating/").content.decode()
    assert "Provisional" in ratings and "Los next" in ratings
    for path in ("/admin/tournaments/ratedset/", "/admin/tournaments/ratingfit/"):
        assert client.get(path).status_code == 200
