"""The baseline correction's maths (games.ratings.baseline): unbiased for any fixed coefficient,
the coefficient independent of the order of the sets, the seats' expected values cancelling
within a set, and the deal's values those of the deal alone. No database."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Game, Ruleset
from games.ratings.baseline import (
    MIN_SAMPLES,
    DealGame,
    beta_fit,
    corrected_score,
    corrected_sum,
    deal_values,
    greedy_move,
    pair_controls,
    pair_weight,
)

luck = st.floats(-10, 10, allow_nan=False)
deal = st.tuples(luck, st.floats(0, 1))  # (seat 0's value of the deal, seat 0's score on it)


def two_game_set(first, second, a=1, b=2):
    """Bot a in seat 0 on deal ``first``, then in seat 1 on deal ``second`` (seats swapped)."""
    (v1, s1), (v2, s2) = first, second
    games = [
        DealGame(participants=((a, 0), (b, 1)), values=(v1, -v1)),
        DealGame(participants=((b, 0), (a, 1)), values=(v2, -v2)),
    ]
    return games, (s1 + (1 - s2)) / 2  # a's share of the set


@given(st.lists(deal, min_size=1, max_size=8), st.floats(-1, 1), st.floats(0.01, 0.99))
def test_for_any_fixed_coefficient_the_corrected_score_has_the_raw_ones_mean(deals, beta, p):
    """Deals drawn independently and uniformly from ``deals`` (every ordered pair of them is a
    set, equally likely): the mean corrected score equals the mean raw score exactly, whatever
    beta and the pair's weight, because each seat's value has mean zero over the deals once its
    own mean is taken off."""
    mean_value = math.fsum(v for v, _ in deals) / len(deals)
    centred = [(v - mean_value, s) for v, s in deals]
    raw, corrected = [], []
    for first in centred:
        for second in centred:
            games, score = two_game_set(first, second)
            control = pair_controls(games)[(1, 2)] * pair_weight(p)
            raw.append(score)
            corrected.append(corrected_score(score, control, beta))
    assert math.fsum(corrected) / len(corrected) == pytest.approx(
        math.fsum(raw) / len(raw), abs=1e-9
    )


@given(deal, deal, st.floats(-5, 5), st.floats(-5, 5))
def test_the_seats_expected_values_cancel_in_a_set_that_rotates_the_seats(first, second, m0, m1):
    games, _ = two_game_set(first, second)
    assert pair_controls(games, seat_means=(m0, m1))[(1, 2)] == pytest.approx(
        pair_controls(games)[(1, 2)], abs=1e-9
    )


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-20, 20)), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
)
@settings(max_examples=30)
def test_the_fitted_coefficient_does_not_depend_on_the_order_of_the_sets(drawn, rng):
    samples = [(s + k / 1000, c * (1 + k % 7)) for k in range(MIN_SAMPLES) for s, c in drawn][
        : MIN_SAMPLES + len(drawn)
    ]  # at least MIN_SAMPLES sets, from a few drawn (drawing hundreds is slow)
    shuffled = list(samples)
    rng.shuffle(shuffled)
    assert beta_fit(shuffled) == beta_fit(samples)  # to the last bit


def test_the_coefficient_is_the_regression_slope_and_a_default_below_the_minimum():
    rng = random.Random(1)
    controls = [rng.gauss(0, 3) for _ in range(2000)]
    scores = [0.5 + 0.02 * c + rng.gauss(0, 0.1) for c in controls]
    fitted = beta_fit(zip(scores, controls, strict=True))
    assert fitted.beta == pytest.approx(0.02, abs=0.002)
    # rho squared: 0.0036 of 0.0136 explained
    assert fitted.variance_removed == pytest.approx(0.0036 / 0.0136, abs=0.04)
    assert fitted.samples == 2000
    few = beta_fit([(1.0, 2.0)] * (MIN_SAMPLES - 1), default=0.25)
    assert (few.beta, few.samples, few.variance_removed) == (0.25, MIN_SAMPLES - 1, 0.0)
    flat = beta_fit([(0.5, 1.0)] * MIN_SAMPLES, default=0.25)
    assert flat.beta == 0.25


@given(st.floats(0, 1))
def test_the_pair_weight_is_one_for_an_even_pair_and_fades_towards_a_sure_result(p):
    assert 0.0 <= pair_weight(p) <= 1.0
    assert pair_weight(p) == pytest.approx(pair_weight(1 - p))
    assert pair_weight(0.5) == 1.0


@given(st.floats(-50, 50), st.integers(1, 100))
def test_a_pairs_corrected_sum_stays_within_its_sets(score, count):
    assert 0 <= corrected_sum(score, count) <= count


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_deals_values_are_the_deals_alone_and_sum_to_zero(players):
    ruleset = Ruleset.from_preset("classic", {"players": players, "teams": players == 4})
    values = deal_values(ruleset, 12345, plays=8)
    assert len(values) == (2 if players == 4 else players)
    assert math.fsum(values) == pytest.approx(0.0, abs=1e-9)
    assert deal_values(ruleset, 12345, plays=8) == values  # the same deal, the same values
    assert deal_values(ruleset, 54321, plays=8) != values
    with pytest.raises(ValueError):
        deal_values(ruleset, 1, plays=0)


@given(st.integers(0, 2**63 - 1), st.integers(0, 60), st.sampled_from([2, 3, 4]))
@settings(max_examples=40)
def test_the_greedy_policy_plays_a_legal_move_sweeping_when_it_can(seed, plays, players):
    ruleset = Ruleset.from_preset("classic", {"players": players, "teams": players == 4})
    game = Game.new(ruleset, seed)
    game.play_random(random.Random(seed), plays, True)
    if game.is_over:
        return
    moves = game.legal_moves()
    move = greedy_move(game)
    assert move in moves
    sweeps = [m for m in moves if m.capture and len(m.capture) == len(game.table)]
    if sweeps:
        assert move in sweeps
    elif not any(m.capture for m in moves):
        assert not move.capture
