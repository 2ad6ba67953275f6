"""The Bradley-Terry fit: order independence, anchor, monotonicity, intervals (no database)."""

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.ranking_quality import online_elo
from games.ratings.fit import MEAN, PRIOR_SD, SCALE, PairTable, fit_ratings, fit_table

SCORES = st.sampled_from([0.0, 0.5, 1.0])
PLAYERS = st.integers(min_value=1, max_value=6)
RESULT = st.tuples(PLAYERS, PLAYERS, SCORES).filter(lambda r: r[0] != r[1])
RESULTS = st.lists(RESULT, min_size=1, max_size=40)


def cents(fit) -> dict[int, tuple[int, int]]:
    """Each player's rating and interval half-width, in whole cents."""
    return {
        int(p): (round(fit.rating_of(p) * 100), round(fit.half_width(p) * 100)) for p in fit.players
    }


@settings(max_examples=60, deadline=None)
@given(RESULTS, st.randoms(use_true_random=False))
def test_same_results_in_any_order_give_the_same_ratings_to_the_cent(results, rng):
    shuffled = list(results)
    rng.shuffle(shuffled)
    # the same result may also be given from the other side: (b, a, 1 - s)
    mirrored = [(b, a, 1 - s) if rng.random() < 0.5 else (a, b, s) for a, b, s in shuffled]
    assert cents(fit_ratings(results)) == cents(fit_ratings(mirrored))


@settings(max_examples=60, deadline=None)
@given(RESULTS)
def test_every_connected_group_averages_exactly_the_anchor(results):
    fit = fit_ratings(results)
    groups: dict[int, set[int]] = {int(p): {int(p)} for p in fit.players}
    for a, b, _ in results:
        merged = groups[a] | groups[b]
        for player in merged:
            groups[player] = merged
    for group in {frozenset(g) for g in groups.values()}:
        mean = sum(fit.rating_of(p) for p in group) / len(group)
        assert mean == pytest.approx(MEAN, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(RESULTS, PLAYERS, PLAYERS)
def test_one_more_win_never_lowers_the_winner_nor_raises_the_loser(results, winner, loser):
    if winner == loser:
        return
    before = fit_ratings(results)
    after = fit_ratings([*results, (winner, loser, 1.0)])
    if winner in before.players:
        assert after.rating_of(winner) >= before.rating_of(winner) - 1e-9
    if loser in before.players:
        assert after.rating_of(loser) <= before.rating_of(loser) + 1e-9
    assert after.rating_of(winner) > after.rating_of(loser) - 1e-9 or len(results) > 0


@settings(max_examples=40, deadline=None)
@given(RESULTS)
def test_reversing_every_result_mirrors_the_ratings_around_the_anchor(results):
    fit = fit_ratings(results)
    reversed_fit = fit_ratings([(a, b, 1 - s) for a, b, s in results])
    for player in fit.players:
        assert fit.rating_of(player) - MEAN == pytest.approx(
            MEAN - reversed_fit.rating_of(player), abs=1e-6
        )


@settings(max_examples=40, deadline=None)
@given(RESULTS)
def test_the_fit_is_where_the_log_posterior_is_flat(results):
    fit = fit_ratings(results)
    table = PairTable.from_results(results)
    r = fit.ratings
    p = 1 / (1 + np.exp(-SCALE * (r[table.first] - r[table.second])))
    residual = table.score - table.count * p
    n = len(table.players)
    gradient = (
        SCALE * (np.bincount(table.first, residual, n) - np.bincount(table.second, residual, n))
        - (r - MEAN) / PRIOR_SD**2
    )
    assert np.max(np.abs(gradient)) < 1e-9


def test_a_perfect_record_stays_finite_and_uncertain():
    fit = fit_ratings([(1, 2, 1.0)] * 3)
    assert MEAN < fit.rating_of(1) < MEAN + 600
    assert fit.rating_of(1) + fit.rating_of(2) == pytest.approx(2 * MEAN)
    assert fit.half_width(1) > 200  # far from established (± 100)


def test_more_results_narrow_the_interval_and_approach_the_true_difference():
    rng = random.Random(3)
    truth = 200.0  # player 1 is 200 Elo stronger: expected score 0.76
    expected = 1 / (1 + 10 ** (-truth / 400))
    few = fit_ratings([(1, 2, float(rng.random() < expected)) for _ in range(20)])
    many = fit_ratings([(1, 2, float(rng.random() < expected)) for _ in range(4000)])
    assert many.half_width(1) < few.half_width(1) / 5
    difference = many.rating_of(1) - many.rating_of(2)
    assert abs(difference - truth) < 2 * Z95_OF_DIFFERENCE(many)


def Z95_OF_DIFFERENCE(fit) -> float:  # noqa: N802 (reads as the quantity it is)
    variance = fit.covariance[0, 0] + fit.covariance[1, 1] - 2 * fit.covariance[0, 1]
    return 1.96 * math.sqrt(variance)


def test_likelihood_of_superiority():
    fit = fit_ratings([(1, 2, 1.0)] * 30 + [(1, 2, 0.0)] * 10 + [(2, 3, 0.5)] * 4)
    assert fit.los(1, 2) + fit.los(2, 1) == pytest.approx(1.0)
    assert fit.los(1, 2) > 0.99
    assert 0.3 < fit.los(2, 3) < 0.7  # two draws apart: hardly told apart
    assert fit.los(2, 2) == 0.5


def test_players_without_results_sit_at_the_anchor_with_the_prior_interval():
    fit = fit_ratings([(1, 2, 1.0)], players=[7])
    assert fit.rating_of(7) == MEAN
    assert fit.sd_of(7) == pytest.approx(PRIOR_SD)
    with pytest.raises(KeyError):
        fit.rating_of(8)


def test_an_empty_pool_fits_to_nothing():
    fit = fit_table(PairTable.from_results([]))
    assert len(fit.players) == 0 and fit.iterations == 0


def test_a_player_cannot_meet_itself():
    with pytest.raises(ValueError):
        PairTable.from_results([(1, 1, 1.0)])


def test_todays_baseline_in_the_benchmark_is_the_elo_it_replaces():
    """The online Elo the benchmark compares with: K 32, one update per game, as before."""
    assert online_elo([(0, 1, 1.0)], 2) == [1516.0, 1484.0]
    assert online_elo([(0, 1, 0.5)], 2) == [1500.0, 1500.0]
    underdog = online_elo([(0, 1, 0.0), (0, 1, 1.0)], 2)  # 1484 against 1516, then a win
    assert underdog[0] - 1484 == pytest.approx(32 * (1 - 1 / (1 + 10 ** (32 / 400))))
    assert sum(underdog) == pytest.approx(3000)
