"""The baseline correction's maths (games.ratings.baseline): unbiased for any fixed coefficient
vector and band, the coefficients independent of the order of the sets and the least-squares
ones, the seats' expected values cancelling within a set, and the deal's values those of the
deal alone. No database."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Game, Ruleset
from games.ratings.baseline import (
    BAND_EDGES,
    DEFAULT_BETAS,
    MIN_SAMPLES,
    beta_fit,
    corrected_score,
    corrected_sum,
    deal_controls,
    deal_values,
    greedy_move,
    pair_band,
    pair_controls,
    pair_weight,
)
from tests.ratings.baseline_deals import WIDTH, deal, two_game_set

betas = st.lists(st.floats(-1, 1), min_size=WIDTH, max_size=WIDTH)
two = st.lists(st.floats(-1, 1), min_size=2, max_size=2)  # beta_fit takes any number of controls


@given(st.lists(deal, min_size=1, max_size=8), betas, st.floats(0.01, 0.99))
def test_for_any_fixed_coefficients_the_corrected_score_has_the_raw_ones_mean(deals, beta, p):
    """Deals drawn independently and uniformly from ``deals`` (every ordered pair of them is a
    set, equally likely): the mean corrected score equals the mean raw score exactly, whatever
    the coefficient vector, the pair's weight and so its band, because each seat's value of
    each control has mean zero over the deals once its own mean is taken off."""
    means = [math.fsum(v[k] for v, _ in deals) / len(deals) for k in range(WIDTH)]
    centred = [([x - m for x, m in zip(v, means, strict=True)], s) for v, s in deals]
    raw, corrected = [], []
    for first in centred:
        for second in centred:
            games, score = two_game_set(first, second)
            controls = [c * pair_weight(p) for c in pair_controls(games)[(1, 2)]]
            raw.append(score)
            corrected.append(corrected_score(score, controls, beta))
    assert math.fsum(corrected) / len(corrected) == pytest.approx(
        math.fsum(raw) / len(raw), abs=1e-9
    )


@given(deal, deal, st.lists(betas, min_size=2, max_size=2))
def test_the_seats_expected_values_cancel_in_a_set_that_rotates_the_seats(first, second, means):
    games, _ = two_game_set(first, second)
    with_means = pair_controls(games, seat_means=means)[(1, 2)]
    assert with_means == pytest.approx(pair_controls(games)[(1, 2)], abs=1e-9)


@given(st.floats(0, 1))
def test_the_band_is_the_same_either_way_round_and_grows_with_the_lopsidedness(p):
    assert pair_band(p) == pair_band(1 - p)
    assert 0 <= pair_band(p) <= len(BAND_EDGES) == len(DEFAULT_BETAS) - 1
    assert pair_band(0.5) == 0 and pair_band(1.0) == len(BAND_EDGES)
    assert pair_band(max(p, 1 - p)) <= pair_band(min(1.0, max(p, 1 - p) + 0.05))


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-20, 20)), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
)
@settings(max_examples=30)
def test_the_fitted_coefficients_do_not_depend_on_the_order_of_the_sets(drawn, rng):
    samples = [
        (s + k / 1000, (c * (1 + k % 7), c * (k % 3) - k / 500))
        for k in range(MIN_SAMPLES)
        for s, c in drawn
    ][: MIN_SAMPLES + len(drawn)]  # at least MIN_SAMPLES sets, from a few drawn (hundreds: slow)
    shuffled = list(samples)
    rng.shuffle(shuffled)
    default = (0.0,) * 2
    assert beta_fit(shuffled, default) == beta_fit(samples, default)  # to the last bit


def test_the_coefficients_are_the_least_squares_ones_and_a_default_below_the_minimum():
    rng = random.Random(1)
    controls = [(rng.gauss(0, 3), rng.gauss(0, 1), rng.gauss(0, 2)) for _ in range(3000)]
    truth = (0.02, -0.05, 0.01)  # any number of controls: three here
    signal = [math.fsum(b * x for b, x in zip(truth, c, strict=True)) for c in controls]
    scores = [0.5 + s + rng.gauss(0, 0.1) for s in signal]
    fitted = beta_fit(zip(scores, controls, strict=True), (0.0, 0.0, 0.0))
    assert fitted.betas == pytest.approx(truth, abs=0.004)
    # R squared: 0.0065 of 0.0165 explained (0.02^2 9 + 0.05^2 + 0.01^2 4 = 0.0065)
    assert fitted.variance_removed == pytest.approx(0.0065 / 0.0165, abs=0.04)
    assert fitted.samples == 3000
    few = beta_fit([(1.0, (2.0, 1.0))] * (MIN_SAMPLES - 1), default=(0.25, 0.5))
    assert (few.betas, few.samples, few.variance_removed) == ((0.25, 0.5), MIN_SAMPLES - 1, 0)
    # a control that never varies, or one that repeats another: the default
    flat = beta_fit([(0.5 + k % 2, (k % 2, 1.0)) for k in range(MIN_SAMPLES)], (0.25,) * 2)
    assert flat.betas == (0.25,) * 2
    twin = beta_fit([(k % 2, (k % 2, k % 2)) for k in range(MIN_SAMPLES)], (0.5,) * 2)
    assert twin.betas == (0.5,) * 2


@given(st.lists(st.tuples(st.floats(0, 1), two), min_size=1, max_size=6), two)
@settings(max_examples=30)
def test_fitted_coefficients_leave_no_more_variance_than_any_other_vector(drawn, other):
    """Least squares: on the sets it was fitted on, no coefficient vector leaves less variance."""
    samples = [
        (s + (k % 13) / 50, (c[0] + k % 7, c[1] + (k % 11) / 3))
        for k in range(MIN_SAMPLES)
        for s, c in drawn
    ]  # a few drawn sets, varied so that no control repeats another
    fitted = beta_fit(samples, (0.0,) * 2)

    def left(beta):
        corrected = [corrected_score(s, c, beta) for s, c in samples]
        mean = math.fsum(corrected) / len(corrected)
        return math.fsum((x - mean) ** 2 for x in corrected)

    assert left(fitted.betas) <= left(other) * (1 + 1e-9) + 1e-9


@given(st.floats(0, 1))
def test_the_pair_weight_is_one_for_an_even_pair_and_fades_towards_a_sure_result(p):
    assert 0.0 <= pair_weight(p) <= 1.0
    assert pair_weight(p) == pytest.approx(pair_weight(1 - p))
    assert pair_weight(0.5) == 1.0


@given(st.floats(-50, 50), st.integers(1, 100))
def test_a_pairs_corrected_sum_stays_within_its_sets(score, count):
    assert 0 <= corrected_sum(score, count) <= count


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_deals_values_are_the_deals_alone_and_each_control_sums_to_zero(players):
    ruleset = Ruleset.from_preset("classic", {"players": players, "teams": players == 4})
    values = deal_values(ruleset, 12345, plays=8)
    assert len(values) == (2 if players == 4 else players)
    assert all(len(team) == WIDTH for team in values)
    for k in range(WIDTH):
        assert math.fsum(team[k] for team in values) == pytest.approx(0.0, abs=1e-9)
    again = deal_values(ruleset, 12345, plays=8)
    assert again == values  # the same deal, the same values
    assert deal_values(ruleset, 54321, plays=8) != values
    with pytest.raises(ValueError):
        deal_values(ruleset, 1, plays=0)


def test_the_controls_are_each_kind_of_plays_points_centred_and_averaged():
    greedy = [20, 10]
    randoms = [[12, 8], [6, 10]]
    values = deal_controls(greedy, randoms)
    assert values[0] == pytest.approx((5.0, 0.0))  # 15 - 10; (2 - 2) / 2
    assert values[1] == pytest.approx((-5.0, 0.0))
    three = deal_controls([9, 6, 0], [[3, 3, 6], [6, 0, 3]])
    assert [v for team in three for v in team] == pytest.approx([4.0, 1.0, 1.0, -2.0, -5.0, 1.0])


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
