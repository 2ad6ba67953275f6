"""Set scores and no-shows as the ratings count them (no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import Ruleset
from games.ratings.sets import (
    GameFacts,
    crosstable_cells,
    game_participants,
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
