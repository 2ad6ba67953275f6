"""The baseline correction in the service (services.baselines): every rated game's deal is
valued after it is stored, each rated set is corrected once all its values are in, the fit reads
the corrected sums, the coefficient is frozen per pool and period, and the sweep mends what a
lost message left."""

import datetime

import pytest
from django.utils import timezone

from games.engine import Ruleset
from games.ratings.baseline import (
    BAND_EDGES,
    CONTROLS,
    CORRECTION_UNIT,
    DEFAULT_BETAS,
    EVEN,
    MIN_SAMPLES,
    POLICY,
    TERMS,
    deal_values,
    score_correction,
    swing_means,
)
from tournaments.models import (
    BaselineCoefficient,
    DealBaseline,
    Game,
    PairTotal,
    RatedSet,
    SetScore,
)
from tournaments.services.baselines import (
    baseline_coefficient,
    baselines_sweep,
    period_start,
    rated_set_correct,
)
from tournaments.services.league_creation import league_create
from tournaments.services.league_schedules import league_start
from tournaments.services.rating_fits import pool_fit_compute, ratings_recompute

pytestmark = pytest.mark.django_db(transaction=True)
POOL = "classic/2p"


def rated_league(staff, bots, name="rated"):
    league = league_create(
        creator=staff, name=name, bot_ids=[b.id for b in bots], rated=True, games_per_pairing=4
    )
    league_start(league_id=league.id, user=staff)  # eager Celery: played, valued, corrected
    return league


def test_rated_games_are_valued_and_their_sets_corrected_into_the_fit(
    staff, make_rated_bot, settings
):
    settings.ESCOBA_BASELINE_PLAYS = 8
    bots = [make_rated_bot("greedy"), make_rated_bot("random"), make_rated_bot("expert")]
    league = rated_league(staff, bots)
    ruleset = Ruleset.from_dict(league.ruleset)
    games = list(Game.objects.filter(league=league).select_related("baseline"))
    assert len(games) == 12
    for game in games:  # the value of the very deal the game was played on
        assert game.baseline.seed == game.seed and game.baseline.plays == 8
        values = tuple(tuple(team) for team in game.baseline.values)
        assert values == deal_values(ruleset, game.seed, 8)
        assert game.baseline.cpu_ms > 0
    sets = list(RatedSet.objects.filter(match__league=league))
    assert len(sets) == 6 and all(s.corrected_at is not None for s in sets)
    coefficient = BaselineCoefficient.objects.get(pool=POOL)
    assert {s.coefficient_id for s in sets} == {coefficient.id} and coefficient.policy == POLICY
    # no deal valued before the period: no even means, so no even terms this period
    assert coefficient.means == []
    assert all(band["betas"][len(CONTROLS) :] == [0.0] * len(EVEN) for band in coefficient.bands)
    # nothing corrected before this period: every band has the defaults
    assert len(coefficient.bands) == len(BAND_EDGES) + 1
    for band, fitted in enumerate(coefficient.bands):
        assert fitted["samples"] == 0
        assert fitted["betas"][: len(CONTROLS)] == list(DEFAULT_BETAS[band][: len(CONTROLS)])
    for score in SetScore.objects.filter(rated_set__in=sets):
        assert len(score.controls) == TERMS and score.band is not None
        assert score.controls[len(CONTROLS) :] == [0.0] * len(EVEN)
        betas = coefficient.betas(score.band)
        assert score.correction == round(score_correction(score.controls, betas) * CORRECTION_UNIT)
    for total in PairTotal.objects.filter(pool=POOL):
        scores = SetScore.objects.filter(
            pool=POOL, player=total.player_id, opponent=total.opponent_id
        )
        assert total.correction == sum(s.correction for s in scores)
    assert any(total.correction != 0 for total in PairTotal.objects.filter(pool=POOL))
    # a set is corrected once: asking again changes nothing
    assert rated_set_correct(match_id=sets[0].match_id) is None
    assert ratings_recompute().exact  # the published fit is the corrected one, from the sets
    # next period: the mean swing of the pool's latest deals valued before it, with even terms
    DealBaseline.objects.update(created_at=timezone.now() - datetime.timedelta(days=1))
    later = baseline_coefficient(pool=POOL, moment=timezone.now() + datetime.timedelta(days=7))
    latest = DealBaseline.objects.order_by("-id")[: settings.ESCOBA_BASELINE_MEAN_DEALS]
    assert tuple(later.means) == swing_means([deal.values for deal in latest])
    assert sum(b["samples"] for b in later.bands) == 6  # fewer than MIN_SAMPLES: the defaults
    assert [tuple(b["betas"]) for b in later.bands] == list(DEFAULT_BETAS)


def test_a_set_waits_for_its_last_value_and_the_sweep_makes_up_for_lost_messages(
    staff, make_rated_bot, settings, monkeypatch
):
    from tournaments import queueing

    sent: list[int] = []
    corrections: list[int] = []
    monkeypatch.setattr(queueing, "baselines_enqueue", sent.extend)
    # the sets' messages (value the deals, then correct) are lost
    monkeypatch.setattr(queueing, "set_correction_enqueue", corrections.append)
    bots = [make_rated_bot("greedy"), make_rated_bot("expert")]
    league = rated_league(staff, bots, "lost")
    rated = RatedSet.objects.filter(match__league=league)
    assert rated.count() == 2 and not rated.filter(corrected_at__isnull=False).exists()
    assert not DealBaseline.objects.exists()
    before = pool_fit_compute(pool=POOL)  # the raw scores count meanwhile
    assert before.sets == 2
    assert sorted(corrections) == sorted(rated.values_list("match_id", flat=True))
    assert sent == []  # one message a set, none a game

    Game.objects.filter(league=league).update(finished_at=timezone.now() - datetime.timedelta(1))
    RatedSet.objects.update(created_at=timezone.now() - datetime.timedelta(1))
    report = baselines_sweep()
    assert report["valued"] == 4 and sorted(sent) == sorted(
        Game.objects.filter(league=league).values_list("id", flat=True)
    )
    monkeypatch.undo()
    from tournaments.tasks import value_game

    for game_id in sent:
        value_game(game_id)  # the worker's run of each message the sweep sent
    assert not rated.filter(corrected_at__isnull=True).exists()
    assert ratings_recompute().exact


def test_the_sweep_values_only_the_games_of_recorded_sets(staff, make_rated_bot, monkeypatch):
    """A set still in play (or one that counts for nobody) has no rated set: its games wait for
    the set's own message, and the sweep sends nothing a game for them, however old."""
    from tournaments import queueing

    sent: list[int] = []
    monkeypatch.setattr(queueing, "baselines_enqueue", sent.extend)
    monkeypatch.setattr(queueing, "set_correction_enqueue", lambda match_id: None)
    league = rated_league(staff, [make_rated_bot("greedy"), make_rated_bot("expert")], "open")
    Game.objects.filter(league=league).update(finished_at=timezone.now() - datetime.timedelta(1))
    unrecorded = RatedSet.objects.filter(match__league=league).first()
    unrecorded.delete()

    assert baselines_sweep()["valued"] == 2
    recorded = Game.objects.filter(league=league).exclude(match_id=unrecorded.match_id)
    assert sorted(sent) == sorted(recorded.values_list("id", flat=True))


def test_the_coefficient_is_fitted_on_the_sets_before_its_period_and_then_frozen(
    record_sets, make_rated_bot
):
    a, b = make_rated_bot("greedy"), make_rated_bot("expert")
    record_sets(POOL, [(a, b, 1.0), (a, b, 0.0)] * (MIN_SAMPLES // 2), fit=False)
    last_week = timezone.now() - datetime.timedelta(days=7)
    for number, score in enumerate(SetScore.objects.filter(pool=POOL).order_by("id")):
        # a won the sets whose deals favoured it by the random control, in the lopsided band;
        # the greedy control is noise
        won = 1 if score.twelfths == 12 else -1
        noise = [number % m - m // 2 for m in (7, 11, 13, 17)][: TERMS - 2]
        score.controls = [number % 5 - 2, won * (1 + number % 3), *noise]
        score.band = len(BAND_EDGES)
        score.save(update_fields=["controls", "band"])
    RatedSet.objects.update(corrected_at=last_week)
    # a coefficient of the period for another policy's values corrects none of today's
    before = BaselineCoefficient.objects.create(
        pool=POOL, period_start=period_start(timezone.now()), policy="greedy,random", bands=[]
    )
    old = baseline_coefficient(pool=POOL, moment=last_week)
    now = baseline_coefficient(pool=POOL)
    assert now.pk != before.pk and now.policy == POLICY
    assert all(band["samples"] == 0 for band in old.bands)
    close, lopsided = now.bands[0], now.bands[-1]
    assert close["samples"] == 0
    # no deals valued before the period: the even terms' coefficients are 0 (no means)
    assert close["betas"] == [*DEFAULT_BETAS[0][: len(CONTROLS)], *[0.0] * len(EVEN)]
    assert lopsided["samples"] == MIN_SAMPLES and lopsided["betas"][1] > 0.1
    assert abs(lopsided["betas"][0]) < 0.05
    assert now.period_start == period_start(timezone.now()) != old.period_start
    # later sets change nothing of frozen coefficients
    SetScore.objects.update(controls=[0.0, 1.0])
    assert baseline_coefficient(pool=POOL).bands == now.bands
