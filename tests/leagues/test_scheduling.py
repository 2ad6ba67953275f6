"""The schedule: round robins, 3-bot tables, partnerships and duplicate deals (no database)."""

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.scheduling import (
    ERROR_DUPLICATE_BOTS,
    MAX_SEED,
    build_individual_schedule,
    build_schedule,
    circle_rounds,
    deals_shared,
    duplicate_seatings,
    individual_seatings,
    individual_tables,
    match_seed,
    schedule_errors,
    set_seeds,
    table_rounds,
)


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8, 9])
def test_circle_method_meets_everyone_once_and_nobody_twice_a_round(count):
    entrants = list(range(count))
    rounds = circle_rounds(entrants)
    assert len(rounds) == (count - 1 if count % 2 == 0 else count)
    met = Counter(frozenset(pair) for r in rounds for pair in r)
    assert set(met) == {frozenset(p) for p in itertools.combinations(entrants, 2)}
    assert set(met.values()) == {1}
    for pairs in rounds:
        playing = [bot for pair in pairs for bot in pair]
        assert len(playing) == len(set(playing))


def test_table_rounds_hold_every_table_once_and_nobody_twice_a_round():
    rounds = table_rounds(range(6), 3)
    tables = [frozenset(t) for r in rounds for t in r]
    assert sorted(map(sorted, tables)) == sorted(map(sorted, itertools.combinations(range(6), 3)))
    for tables_in_round in rounds:
        playing = [bot for t in tables_in_round for bot in t]
        assert len(playing) == len(set(playing))


def test_two_player_duplicate_swaps_seats():
    assert duplicate_seatings(("a", "b"), 2) == [("a", "b"), ("b", "a")]


def test_three_player_cycle_puts_each_bot_in_each_seat_and_alternates_order_of_play():
    first = duplicate_seatings(("a", "b", "c"), 3, 0)
    second = duplicate_seatings(("a", "b", "c"), 3, 1)
    for cycle in (first, second):
        for seat in range(3):
            assert {seating[seat] for seating in cycle} == {"a", "b", "c"}
    # a plays just before b in the first cycle, just after b in the second
    assert all(s[(s.index("a") + 1) % 3] == "b" for s in first)
    assert all(s[(s.index("a") + 1) % 3] == "c" for s in second)


def test_partnership_bots_field_both_seats_of_their_team_and_swap_teams():
    assert duplicate_seatings(("a", "b"), 4) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]


def test_two_player_league_of_eight_is_28_matches_of_56_games():
    schedule = build_schedule(range(8), players=2, games_per_pairing=2, seed=1)
    assert len(schedule) == 28
    assert sum(len(m.games) for m in schedule) == 56
    assert [m.number for m in schedule] == list(range(1, 29))
    seats = Counter((bot, seat) for m in schedule for g in m.games for seat, bot in enumerate(g))
    assert set(seats.values()) == {7}


def test_more_games_per_pairing_add_sets_with_fresh_seeds():
    schedule = build_schedule(["a", "b", "c"], players=2, games_per_pairing=4, seed=1)
    per_pair = Counter(frozenset(m.participants) for m in schedule)
    assert set(per_pair.values()) == {2}
    assert len({m.seed for m in schedule}) == len(schedule)


def test_three_player_league_covers_every_table_with_both_orders_of_play():
    schedule = build_schedule(range(4), players=3, games_per_pairing=6, seed=3)
    assert len(schedule) == 8
    assert Counter(frozenset(m.participants) for m in schedule) == {
        frozenset(t): 2 for t in itertools.combinations(range(4), 3)
    }
    assert all(len(m.games) == 3 for m in schedule)


def test_partnership_league_is_a_round_robin_of_teams():
    schedule = build_schedule(range(4), players=4, games_per_pairing=2, seed=3)
    assert len(schedule) == 6
    for match in schedule:
        for game in match.games:
            assert game[0] == game[2] and game[1] == game[3] and game[0] != game[1]


def test_seeds_are_stable_and_depend_on_league_and_match():
    assert match_seed(5, 1) == match_seed(5, 1)
    assert len({match_seed(5, 1), match_seed(5, 2), match_seed(6, 1)}) == 3
    assert 0 <= match_seed(5, 1) < 2**63
    first = build_schedule(range(4), players=2, games_per_pairing=2, seed=9)
    again = build_schedule(range(4), players=2, games_per_pairing=2, seed=9)
    assert first == again


@pytest.mark.parametrize(
    ("players", "games", "bots", "fields"),
    [
        (5, 2, 4, {"players"}),
        (2, 3, 4, {"games_per_pairing"}),
        (2, 0, 4, {"games_per_pairing"}),
        (3, 2, 4, {"games_per_pairing"}),
        (3, 3, 2, {"bots"}),
        (4, 2, 1, {"bots"}),
        (2, 2, 2, set()),
        (3, 3, 3, set()),
        (4, 4, 2, set()),
    ],
)
def test_schedule_errors_name_the_field(players, games, bots, fields):
    errors = schedule_errors(bot_count=bots, players=players, games_per_pairing=games)
    assert set(errors) == fields


def test_build_schedule_refuses_a_bot_entered_twice():
    with pytest.raises(ValueError, match=ERROR_DUPLICATE_BOTS):
        build_schedule(["a", "a", "b"], players=2, games_per_pairing=2, seed=1)


def test_sets_share_one_deal_unless_told_to_deal_afresh():
    shared = build_schedule(range(4), players=2, games_per_pairing=4, seed=5)
    assert all(m.shared and set(m.seeds) == {m.seed} for m in shared)
    fresh = build_schedule(range(4), players=2, games_per_pairing=4, seed=5, shared=False)
    seeds = [seed for m in fresh for seed in m.seeds]
    assert not any(m.shared for m in fresh)
    assert len(set(seeds)) == len(seeds)  # no deal twice in the whole league
    assert {m.seed for m in fresh} == {m.seed for m in shared}  # the sets' own seeds stay


def test_whether_a_set_shares_its_deal_can_depend_on_its_table():
    owners = {0: "ana", 1: "ana", 2: "bo"}
    schedule = build_schedule(
        range(3), players=2, games_per_pairing=2, seed=9,
        shared=lambda table: deals_shared(rated=False, owners=[owners[b] for b in table]),
    )  # fmt: skip
    for match in schedule:
        assert match.shared == (set(match.participants) == {0, 1})


def test_only_unrated_sets_of_one_owner_share_a_deal():
    assert deals_shared(rated=False, owners=["ana", "ana"])
    assert not deals_shared(rated=False, owners=["ana", "bo"])
    assert not deals_shared(rated=True, owners=["ana", "ana"])
    assert not deals_shared(rated=True, owners=["ana", "bo", "ana"])


@given(st.integers(0, MAX_SEED), st.integers(2, 3))
def test_fresh_deals_differ_from_each_other_and_from_the_set_seed(seed, games):
    seeds = set_seeds(seed, games, shared=False)
    assert len(set(seeds)) == games and seed not in seeds
    assert seeds == set_seeds(seed, games, shared=False)  # stable
    assert all(0 <= s <= MAX_SEED for s in seeds)
    assert set_seeds(seed, games, shared=True) == (seed,) * games


# --- rated partnerships: four different bots, partners rotating ---------------------------------


def _partners(seating: tuple) -> set[frozenset]:
    return {frozenset((seating[0], seating[2])), frozenset((seating[1], seating[3]))}


def test_individual_seatings_pair_everyone_once_and_oppose_everyone_twice():
    games = individual_seatings(("a", "b", "c", "d"))
    assert len(games) == 3 and all(len(set(seating)) == 4 for seating in games)
    partnered = Counter(pair for seating in games for pair in _partners(seating))
    assert set(partnered) == {frozenset(p) for p in itertools.combinations("abcd", 2)}
    assert set(partnered.values()) == {1}  # then each pair is opponents in the other two games
    with pytest.raises(ValueError):
        individual_seatings(("a", "b", "a", "b"))


def test_no_individual_table_holds_two_bots_of_one_owner():
    owner_of = {1: "ana", 2: "ana", 3: "bea", 4: "cid", 5: "dan", 6: "eva"}
    tables = individual_tables(list(owner_of), owner_of)
    assert tables and all(len({owner_of[bot] for bot in table}) == 4 for table in tables)
    assert not any({1, 2} <= set(table) for table in tables)


def test_an_individual_schedule_seats_four_owners_a_table_and_nobody_twice_a_round():
    owner_of = {bot: f"owner{bot}" for bot in range(6)}
    schedule = build_individual_schedule(list(owner_of), owner_of=owner_of, sets=1, seed=5)
    assert len(schedule) == 15  # every table of four among six bots
    for match in schedule:
        assert all(len(set(seating)) == 4 for seating in match.games)
        assert set(match.games[0]) == set(match.participants)
    by_round: dict[int, list] = {}
    for match in schedule:
        by_round.setdefault(match.round, []).extend(match.participants)
    assert all(len(bots) == len(set(bots)) for bots in by_round.values())
    with pytest.raises(ValueError, match="four different owners"):
        build_individual_schedule([1, 2, 3, 4], owner_of={1: 1, 2: 1, 3: 2, 4: 3}, sets=1, seed=1)
