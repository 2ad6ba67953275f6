"""Elo updates, pairwise decomposition and the performance interval (no database)."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.elo import (
    DEFAULT_K,
    INITIAL_RATING,
    expected_score,
    game_deltas,
    performance,
    standing_key,
)

D = Decimal


def test_equal_ratings_win_gains_half_k():
    assert game_deltas([INITIAL_RATING, INITIAL_RATING], [(1,), (0,)], DEFAULT_K) == [
        D("16.00"),
        D("-16.00"),
    ]


def test_draw_between_equals_changes_nothing():
    assert game_deltas([D("1500"), D("1500")], [(1,), (1,)], DEFAULT_K) == [D("0.00"), D("0.00")]


def test_favourite_gains_little_underdog_gains_much():
    # 400 points apart: the favourite is expected to score 10/11
    assert expected_score(D("1900"), D("1500")) == pytest.approx(10 / 11)
    favourite_wins = game_deltas([D("1900"), D("1500")], [(1,), (0,)], DEFAULT_K)
    underdog_wins = game_deltas([D("1900"), D("1500")], [(0,), (1,)], DEFAULT_K)
    assert favourite_wins == [D("2.91"), D("-2.91")]
    assert underdog_wins == [D("-29.09"), D("29.09")]


def test_three_players_decompose_into_pairs_with_k_shared():
    # winner beats both, second beats third: each pair is worth K/2 = 16 between equals
    deltas = game_deltas([D("1500")] * 3, [(1, 1, 9), (1, 0, 7), (1, 0, 3)], DEFAULT_K)
    assert deltas == [D("16.00"), D("0.00"), D("-16.00")]


def test_standing_key_orders_forfeit_last_and_winner_first():
    winner = standing_key(won=True, forfeited=False, total=15)
    runner_up = standing_key(won=False, forfeited=False, total=16)
    forfeit = standing_key(won=False, forfeited=True, total=30)
    assert winner > runner_up > forfeit


ratings = st.decimals(min_value=800, max_value=2800, places=2)


@given(st.lists(ratings, min_size=2, max_size=3), st.data())
def test_deltas_sum_to_exactly_zero_and_stay_within_k(players, data):
    keys = [(data.draw(st.integers(0, 2)),) for _ in players]
    deltas = game_deltas(players, keys, DEFAULT_K)
    assert sum(deltas) == 0
    assert all(abs(d) <= DEFAULT_K for d in deltas)
    assert all(d == d.quantize(D("0.01")) for d in deltas)


def test_deltas_are_reproducible():
    args = ([D("1612.37"), D("1433.10"), D("1500.00")], [(1, 1, 21), (1, 0, 12), (0, 0, 3)])
    assert game_deltas(*args, DEFAULT_K) == game_deltas(*args, DEFAULT_K)


def test_game_deltas_need_one_key_per_player():
    with pytest.raises(ValueError):
        game_deltas([D("1500"), D("1500")], [(1,)], DEFAULT_K)


def test_performance_of_an_even_record_is_the_base_with_a_symmetric_interval():
    estimate = performance(wins=10, draws=0, losses=10)
    assert estimate.elo == 1500
    assert estimate.low < 1500 < estimate.high
    assert 1500 - estimate.low == pytest.approx(estimate.high - 1500, abs=0.2)


def test_performance_interval_narrows_with_more_games():
    few = performance(wins=6, draws=0, losses=4)
    many = performance(wins=60, draws=0, losses=40)
    assert few.elo == pytest.approx(many.elo, abs=0.1)
    assert many.margin < few.margin


def test_perfect_record_stays_finite_and_has_an_interval():
    estimate = performance(wins=8, draws=0, losses=0)
    assert 1500 < estimate.low < estimate.elo < 3000
    assert estimate.high >= estimate.elo


def test_a_perfect_record_over_few_games_claims_no_false_precision():
    perfect = performance(wins=4, draws=0, losses=0)
    even = performance(wins=2, draws=0, losses=2)
    assert perfect.low < perfect.elo < perfect.high
    assert perfect.margin > even.margin / 2
    assert perfect.low < 1500 + 100  # four wins barely rule out an equal strength


def test_no_games_no_estimate():
    assert performance(wins=0, draws=0, losses=0) is None
