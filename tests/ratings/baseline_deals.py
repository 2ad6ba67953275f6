"""Deals and two-game sets as the baseline correction sees them, for the Hypothesis tests of
its maths (tests/ratings/test_baseline_maths.py, test_baseline_even.py)."""

from hypothesis import strategies as st

from games.ratings.baseline import CONTROLS, DealGame

WIDTH = len(CONTROLS)
luck = st.floats(-10, 10, allow_nan=False)
# A deal as the correction sees it: per team, one value per control (each control summing to
# zero over the teams, as deal_controls makes them), and seat 0's score on it.
deal = st.tuples(st.lists(luck, min_size=WIDTH, max_size=WIDTH), st.floats(0, 1))


def two_game_set(first, second, a=1, b=2):
    """Bot a in seat 0 on deal ``first``, then in seat 1 on deal ``second`` (seats swapped);
    the games and a's share of the set."""
    (v1, s1), (v2, s2) = first, second
    games = [
        DealGame(participants=((a, 0), (b, 1)), values=(tuple(v1), tuple(-x for x in v1))),
        DealGame(participants=((b, 0), (a, 1)), values=(tuple(v2), tuple(-x for x in v2))),
    ]
    return games, (s1 + (1 - s2)) / 2  # a's share of the set
