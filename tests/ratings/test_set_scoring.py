"""Set scores and no-shows as the ratings count them (no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import Ruleset
from games.ratings.sets import (
    GameFacts,
    crosstable_cells,
    fresh_set_pair_scores,
    game_participants,
    margin_twelfths,
    no_show_seats,
    set_outcomes,
    set_pair_scores,
    standing_key,
)


def duel(first: int, second: int, winner: int | None, totals, forfeit_team=None) -> GameFacts:
    """A two-player game with ``first`` in seat 0 (team 0)."""
    return GameFacts(((first, 0), (second, 1)), winner, tuple(totals), forfeit_team)


def test_standing_key_orders_forfeit_last_and_winner_first():
    winner = standing_key(won=True, forfeited=False, total=15)
    runner_up = standing_key(won=False, forfeited=False, total=16)
    forfeit = standing_key(won=False, forfeited=True, total=30)
    assert winner > runner_up > forfeit


@pytest.mark.parametrize(
    ("games", "score"),
    [
        # won both games of the set
        ([duel(1, 2, 0, [21, 10]), duel(2, 1, 1, [9, 21])], 1.0),
        # one game each: leans a quarter to the side with more game points over the set
        ([duel(1, 2, 0, [21, 15]), duel(2, 1, 0, [21, 12])], 0.25),  # 1 made 33, 2 made 36
        ([duel(1, 2, 0, [21, 5]), duel(2, 1, 0, [21, 19])], 0.75),  # 1 made 40, 2 made 26
        # one game each and the same points: level
        ([duel(1, 2, 0, [21, 16]), duel(2, 1, 0, [21, 16])], 0.5),
        # a drawn game (no winner) counts half
        ([duel(1, 2, None, [20, 20]), duel(2, 1, 1, [3, 21])], 0.75),
        ([duel(1, 2, None, [20, 20]), duel(2, 1, 0, [21, 3])], 0.25),
        # a bot that forfeited a game of the set loses the set, whatever it did in the other
        ([duel(1, 2, 1, [20, 2], forfeit_team=0), duel(2, 1, 1, [10, 21])], 0.0),
        # both forfeited one: the games decide as usual (one each; 1 made 7 points, 2 made 12)
        ([duel(1, 2, 1, [5, 2], forfeit_team=0), duel(2, 1, 1, [10, 2], forfeit_team=0)], 0.25),
    ],
)
def test_a_two_player_set_scores_games_won_then_game_points(games, score):
    assert set_pair_scores(games) == [(1, 2, score)]


def test_the_pair_is_reported_lower_id_first_whoever_sat_first():
    games = [duel(9, 4, 0, [21, 10]), duel(4, 9, 1, [10, 21])]
    assert set_pair_scores(games) == [(4, 9, 0.0)]


def test_a_three_player_set_scores_every_pair():
    def trio(seating, winner, totals):
        return GameFacts(tuple((b, s) for s, b in enumerate(seating)), winner, totals, None)

    games = [
        trio((1, 2, 3), 0, (21, 10, 5)),  # 1 wins; 2 beats 3 on points
        trio((2, 3, 1), 2, (12, 14, 21)),  # 1 wins; 3 beats 2
        trio((3, 1, 2), 2, (8, 6, 21)),  # 2 wins; 3 beats 1
    ]
    # 1 beat 2 and 3 in games 1 and 2; 2 beat 3 in games 1 and 3: two games of three each time
    assert set_pair_scores(games) == [(1, 2, 2 / 3), (1, 3, 2 / 3), (2, 3, 2 / 3)]


def test_every_set_score_is_whole_twelfths_and_the_pair_sums_to_one():
    for a_points, b_points in [(21, 15), (15, 21), (21, 21)]:
        games = [duel(1, 2, 0, [21, b_points]), duel(2, 1, 0, [21, a_points])]
        (_, _, score) = set_pair_scores(games)[0]
        (_, _, mirrored) = set_pair_scores([duel(2, 1, 1, [b_points, 21]), games[1]])[0]
        assert score * 12 == round(score * 12)
        assert mirrored == score  # the same games told from the other seat


# --- rated sets, dealt afresh: by game points -------------------------------------------------


@pytest.mark.parametrize(
    ("games", "twelfths"),
    [
        # won both games narrowly: a margin of 3 over two games is a twelfth (6 * 3 / 20 = 0.9)
        ([duel(1, 2, 0, [21, 19]), duel(2, 1, 1, [20, 21])], 7),
        # won both by 11: 22 points, past the 20 that take the whole set
        ([duel(1, 2, 0, [21, 10]), duel(2, 1, 1, [10, 21])], 12),
        # one game each: the margin decides, 1 made 33, 2 made 36
        ([duel(1, 2, 0, [21, 15]), duel(2, 1, 0, [21, 12])], 5),
        # lost both, but by little: 2 points over the set round to half a twelfth, not less
        ([duel(1, 2, 1, [20, 21]), duel(2, 1, 0, [21, 20])], 6 - 1),
        # level points: level score, whoever won more games
        ([duel(1, 2, 0, [21, 16]), duel(2, 1, 0, [21, 16])], 6),
        # a drawn game is level; 18 points in the other, 5.4 twelfths
        ([duel(1, 2, None, [20, 20]), duel(2, 1, 1, [3, 21])], 11),
        # a bot that forfeited a game of the set loses the set, whatever the points say
        ([duel(1, 2, 1, [20, 2], forfeit_team=0), duel(2, 1, 1, [10, 21])], 0),
        # both forfeited one: each forfeited game counts lost by 20 points or more (7 - 22 = -15
        # and 12 + 20 = 32 ... seen from 1: -20 in game 1, +20 in game 2, so level)
        ([duel(1, 2, 1, [5, 2], forfeit_team=0), duel(2, 1, 1, [10, 2], forfeit_team=0)], 6),
    ],
)
def test_a_rated_set_scores_the_game_point_margin(games, twelfths):
    assert fresh_set_pair_scores(games) == [(1, 2, twelfths / 12)]


def test_margin_twelfths_rounds_half_away_from_zero_within_half_a_set():
    # two games: a twelfth for each 10/3 points
    assert [margin_twelfths(m, 2) for m in (0, 1, 2, 3, 5, 6, 19, 20, 60)] == [
        0, 0, 1, 1, 2, 2, 6, 6, 6,
    ]  # fmt: skip
    assert margin_twelfths(-2, 2) == -1  # 0.6 of a twelfth, away from zero both ways
    assert margin_twelfths(5, 3) == 1  # three games: 6 * 5 / 30 = 1
    assert margin_twelfths(25, 3) == 5  # 6 * 25 / 30 = 5


@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.integers(0, 40),
            st.integers(0, 40),
            st.sampled_from([None, 0, 1]),
            st.sampled_from([None, 0, 1]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_rated_set_is_whole_twelfths_the_same_from_either_side_and_grows_with_points(rows):
    def game(first_seat, a, b, winner, forfeit):
        seating = ((1, 0), (2, 1)) if first_seat else ((2, 0), (1, 1))
        totals = (a, b) if first_seat else (b, a)
        flip = {None: None, 0: 0 if first_seat else 1, 1: 1 if first_seat else 0}
        return GameFacts(seating, flip[winner], totals, flip[forfeit])

    games = [game(*row) for row in rows]
    ((first, second, score),) = fresh_set_pair_scores(games)
    assert (first, second) == (1, 2)
    assert score * 12 == round(score * 12) and 0 <= score <= 1
    # the same games with the bots' ids swapped: the other side of the same score
    swapped = [
        GameFacts(tuple((3 - p, t) for p, t in g.participants), g.winner, g.totals, g.forfeit_team)
        for g in games
    ]
    ((_, _, other),) = fresh_set_pair_scores(swapped)
    assert round(12 * other) == 12 - round(12 * score)
    # a point more for bot 1 in a game nobody forfeited never lowers its score
    clean = [i for i, g in enumerate(games) if g.forfeit_team is None]
    if clean:
        g = games[clean[0]]
        team = dict(g.participants)[1]
        totals = tuple(t + (k == team) for k, t in enumerate(g.totals))
        more = [*games[: clean[0]], GameFacts(g.participants, g.winner, totals, None),
                *games[clean[0] + 1 :]]  # fmt: skip
        assert fresh_set_pair_scores(more)[0][2] >= score


def test_a_rated_partnership_set_scores_each_pair_on_the_games_it_met_in():
    teams = Ruleset.from_preset("classic", {"players": 4, "teams": True}).team_of

    def table(seating, totals):
        return GameFacts(tuple(game_participants(seating, teams)), None, totals, None)

    games = [
        table((1, 2, 3, 4), (25, 15)),  # 1 & 3 against 2 & 4
        table((1, 3, 2, 4), (18, 21)),  # 1 & 2 against 3 & 4
        table((1, 2, 4, 3), (21, 10)),  # 1 & 4 against 2 & 3
    ]
    scores = {(a, b): round(12 * s) for a, b, s in fresh_set_pair_scores(games)}
    # 1 met 2 in games 1 and 3 (+10, +11): 21 points over two games, the whole set
    assert scores[(1, 2)] == 12
    # 1 met 3 in games 2 and 3 (-3, +11): 8 points, 6 * 8 / 20 = 2.4 twelfths
    assert scores[(1, 3)] == 8
    # 3 and 4 were partners in game 2, and met in games 1 and 3 (+10, -11): level
    assert scores[(3, 4)] == 6


def test_partnership_bots_count_once_per_game():
    teams = Ruleset.from_preset("classic", {"players": 4, "teams": True}).team_of
    assert game_participants([5, 3, 5, 3], teams) == [(3, 1), (5, 0)]
    trio = Ruleset.from_preset("classic", {"players": 3}).team_of
    assert game_participants([5, 3, 8], trio) == [(3, 1), (5, 0), (8, 2)]


def fault(seat: int, kind: str) -> dict:
    return {"seat": seat, "round": 1, "play": 1, "kind": kind, "detail": ""}


def test_a_seat_never_reached_is_a_no_show():
    plays = [(0, None), (1, "connect"), (0, None), (1, "connect")]
    faults = [fault(1, "connect"), fault(1, "connect"), fault(1, "timeout")]
    assert no_show_seats(seats=2, plays=plays, faults=faults) == {1}


def test_a_seat_that_played_and_then_failed_is_not_a_no_show():
    plays = [(0, None), (1, None), (0, None), (1, "timeout")]
    faults = [fault(1, "timeout"), fault(1, "timeout")]
    assert no_show_seats(seats=2, plays=plays, faults=faults) == set()


def test_a_seat_that_answered_badly_is_not_a_no_show():
    # it was reached and answered: a broken bot, which loses by forfeit
    plays = [(0, None), (1, "bad_json")]
    assert no_show_seats(seats=2, plays=plays, faults=[fault(1, "bad_json")]) == set()
    mixed = [fault(1, "connect"), fault(1, "http_status")]
    assert no_show_seats(seats=2, plays=[(0, None)], faults=mixed) == set()


def test_a_seat_never_asked_is_not_a_no_show():
    # seat 0 forfeited on its first fault, before seat 1 was asked anything
    assert no_show_seats(seats=2, plays=[], faults=[fault(0, "connect")]) == {0}


# --- set outcomes and the crosstable (shared by the league table and `bots_sdk league`) ---------

_trio_game = st.builds(
    lambda order, winner, totals: GameFacts(
        tuple((player, team) for team, player in enumerate(order)), winner, tuple(totals), None
    ),
    st.permutations([1, 2, 3]),
    st.one_of(st.none(), st.integers(0, 2)),
    st.lists(st.integers(0, 30), min_size=3, max_size=3),
)


@given(st.lists(_trio_game, min_size=1, max_size=6))
def test_a_set_has_one_winner_or_leaders_sharing_a_draw(games):
    outcomes = set_outcomes(games)
    assert set(outcomes) == {1, 2, 3}
    won = [p for p, o in outcomes.items() if o == "won"]
    drawn = [p for p, o in outcomes.items() if o == "drawn"]
    assert (len(won), len(drawn)) == (1, 0) or (not won and len(drawn) >= 2)


@given(st.lists(_trio_game, min_size=1, max_size=6))
def test_crosstable_cells_add_up_for_every_pair(games):
    cells = crosstable_cells(games)
    for (a, b), (score, count) in cells.items():
        other_score, other_count = cells[(b, a)]
        assert count == other_count == len(games)
        assert score + other_score == count
        assert 0 <= score <= count


def test_set_outcomes_by_games_won_then_points():
    assert set_outcomes([duel(1, 2, 0, [21, 10]), duel(2, 1, 1, [9, 21])]) == {
        1: "won",
        2: "lost",
    }
    # one game each, more points: won; the same points: drawn
    assert set_outcomes([duel(1, 2, 0, [21, 5]), duel(2, 1, 0, [21, 19])])[1] == "won"
    assert set(set_outcomes([duel(1, 2, 0, [21, 16]), duel(2, 1, 0, [21, 16])]).values()) == {
        "drawn"
    }


def test_rotating_partners_are_scored_only_on_the_games_they_played_against_each_other():
    """Rated partnerships: four bots, partners rotating (a&c v b&d, a&b v c&d, a&d v b&c).
    Team 0 wins every game: each pair is scored on the two games its bots were opponents."""
    seatings = [(1, 2, 3, 4), (1, 3, 2, 4), (1, 2, 4, 3)]
    team_of = Ruleset.from_preset("classic", {"players": 4, "teams": True}).team_of
    games = [GameFacts(tuple(game_participants(s, team_of)), 0, (21, 10), None) for s in seatings]
    scores = {(a, b): score for a, b, score in set_pair_scores(games)}
    assert len(scores) == 6  # every pair met (twice)
    # 1 won all three games: against each other bot it won both games they were opponents.
    assert scores[(1, 2)] == scores[(1, 3)] == scores[(1, 4)] == 1.0
    # 2 and 3: opponents in games 1 and 2 (3 on team 0 in game 1, 2 on team 0 in game 2): 1-1,
    # and the points too, so a level 1/2.
    assert scores[(2, 3)] == 0.5
    cells = crosstable_cells(games)
    assert cells[(1, 2)] == (2.0, 2)  # partners in game 3: not a meeting


@given(st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45)), min_size=2, max_size=2))
def test_the_luck_benchmark_scores_a_fresh_set_as_the_arena_does(totals):
    """``benchmarks.luck.set_score`` (vectorised, for millions of drawn sets) and the rule rated
    sets are recorded by give the same twelfths."""
    import numpy as np

    from benchmarks.luck import set_score

    (a0, b0), (a1, b1) = totals  # bot 1 in seat 0 of the first game, seat 1 of the second
    games = [duel(1, 2, None, [a0, b0]), duel(2, 1, None, [b1, a1])]
    ((_, _, score),) = fresh_set_pair_scores(games)
    vectorised = set_score(np.array(0.5), np.array(a0 - b0), np.array(0.5), np.array(a1 - b1))
    assert round(12 * float(vectorised)) == round(12 * score)
