"""The even terms of the baseline correction (games.ratings.baseline): how swingy a deal is,
less its frozen mean, weighted by the pair's expected edge. Unbiased for any fixed coefficients
when the mean is the deals' own, zero for partners, and the frozen mean that of random deals."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Ruleset
from games.ratings.baseline import (
    EVEN,
    TERMS,
    DealGame,
    corrected_score,
    deal_swings,
    deal_values,
    edge_weight,
    pair_controls,
    pair_even_terms,
    pair_weight,
    swing_means,
)
from tests.ratings.baseline_deals import WIDTH, deal, two_game_set


@given(
    st.lists(deal, min_size=1, max_size=6),
    st.lists(st.floats(-1, 1), min_size=TERMS, max_size=TERMS),
    st.floats(0.01, 0.99),
)
@settings(max_examples=60, deadline=None)
def test_with_even_terms_any_fixed_coefficients_keep_the_raw_mean(deals, beta, p):
    """Every ordered pair of ``deals`` a set, equally likely: with the deals' own mean swing
    frozen, the mean corrected score is the mean raw score, whatever the coefficients and the
    pair's edge (which enters both the odd controls' weight and the even terms' sign)."""
    swings = [deal_swings((tuple(v), tuple(-x for x in v))) for v, _ in deals]
    means = [math.fsum(s[k] for s in swings) / len(swings) for k in range(len(EVEN))]
    centre = [math.fsum(v[k] for v, _ in deals) / len(deals) for k in range(WIDTH)]
    centred = [([x - m for x, m in zip(v, centre, strict=True)], s) for v, s in deals]
    raw, corrected = [], []
    for a, first in enumerate(centred):
        for b, second in enumerate(centred):
            games, score = two_game_set(first, second)
            # the swing is of the deal as dealt, not centred: give the even terms the real values
            real, _ = two_game_set(deals[a], deals[b])
            odd = [c * pair_weight(p) for c in pair_controls(games)[(1, 2)]]
            even = [e * edge_weight(p) for e in pair_even_terms(real, means)[(1, 2)]]
            raw.append(score)
            corrected.append(corrected_score(score, odd + even, beta))
    assert math.fsum(corrected) / len(corrected) == pytest.approx(
        math.fsum(raw) / len(raw), abs=1e-9
    )


@given(st.floats(0, 1))
def test_the_edge_weight_points_to_the_favourite(p):
    assert edge_weight(p) == pytest.approx(-edge_weight(1 - p))
    assert -1 <= edge_weight(p) <= 1 and edge_weight(0.5) == 0
    assert (edge_weight(p) > 0) == (p > 0.5)


def test_a_swing_is_the_same_for_both_seats_and_partners_get_no_even_term():
    values = ((3.0, -1.0, 2.0), (-3.0, 1.0, -2.0))
    assert deal_swings(values) == (9.0, 1.0, 4.0)
    partners = DealGame(participants=((1, 0), (2, 0), (3, 1), (4, 1)), values=values)
    terms = pair_even_terms([partners], (1.0, 1.0, 1.0))
    assert terms[(1, 2)] == terms[(3, 4)] == (0.0, 0.0, 0.0)
    assert terms[(1, 3)] == terms[(2, 4)] == (8.0, 0.0, 3.0)


def test_an_even_term_less_its_frozen_mean_has_mean_zero_over_random_deals():
    """The frozen mean (a pool's past deals) against the mean swing of other random deals:
    each even term's difference within four standard errors of zero."""
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    past = random.Random("a pool's past deals")
    frozen = swing_means([deal_values(ruleset, past.getrandbits(63), 2) for _ in range(80)])
    with pytest.raises(ValueError):
        swing_means([])
    seeds = random.Random("other deals")
    swings = [deal_swings(deal_values(ruleset, seeds.getrandbits(63), 2)) for _ in range(80)]
    for k, mean in enumerate(frozen):
        found = [s[k] for s in swings]
        centre = math.fsum(found) / len(found)
        spread = math.sqrt(math.fsum((x - centre) ** 2 for x in found) / (len(found) - 1))
        error = spread * math.sqrt(2 / len(found))  # two independent means of 80 deals
        assert mean > 0 and abs(centre - mean) <= 4 * error, (EVEN[k], centre, mean)
