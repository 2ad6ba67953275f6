"""The matchmaker's rules, checked on every decision against a brute-force reading of them."""

import math
import random
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.matchmaking import Entrant, Matchmaker, Rules


def entrants(count: int, *, owners: int | None = None, spacing: float = 10.0) -> list[Entrant]:
    return [
        Entrant(bot=i, owner=i % owners if owners else i, rating=1500 + spacing * i, width=100)
        for i in range(count)
    ]


def simulate(pool, rules, rounds, seed=1, finish_every=1):
    """Decide tables one by one, finishing the oldest set in flight every ``finish_every``
    decisions (as results come in), and check each decision against the rules. Returns the
    tables in order."""
    rng = random.Random(seed)
    by_bot = {e.bot: e for e in pool}
    in_flight: list[tuple] = []
    history: list[tuple] = []
    made = []
    for step in range(rounds):
        busy = Counter(b for table in in_flight for b in table)
        current = [
            Entrant(
                bot=e.bot,
                owner=e.owner,
                rating=e.rating,
                width=e.width,
                new=e.new,
                recent_sets=sum(e.bot in t for t in history),
                in_flight=busy[e.bot],
            )
            for e in pool
        ]
        matchmaker = Matchmaker(current, rules=rules, history=history, rng=rng)
        table = matchmaker.next_table()
        if table is not None:
            check_decision(table, by_bot, busy, history, rules)
            in_flight.append(table)
            history.append(table)
            made.append(table)
        if in_flight and (step % finish_every == 0 or table is None):
            in_flight.pop(0)
    return made


def owner(by_bot, bot):
    return by_bot[bot].owner if by_bot[bot].owner is not None else ("house", bot)


def check_decision(table, by_bot, busy, history, rules):
    assert len(table) == rules.table == len(set(table))
    for bot in table:
        assert busy[bot] < rules.max_sets_per_bot, f"bot {bot} over its sets in flight"
    owners = [owner(by_bot, b) for b in table]
    assert len(set(owners)) == len(owners), f"two bots of one owner meet: {table}"
    anchor, opponent = table[0], table[1]

    def eligible(other):
        return (
            other != anchor
            and busy[other] < rules.max_sets_per_bot
            and owner(by_bot, other) != owner(by_bot, anchor)
        )

    def recent_opponents(bot):
        mine = [t for t in history if bot in t][-rules.repeat_window :]
        return {b for t in mine for b in t if b != bot}

    def fresh(other):
        return other not in recent_opponents(anchor) and anchor not in recent_opponents(other)

    if rules.table == 2 and not fresh(opponent):
        waiting = [b for b in by_bot if eligible(b) and fresh(b)]
        assert not waiting, f"{table} repeats while {waiting} wait"


def test_a_table_obeys_capacity_owners_and_repeats_over_a_long_run():
    pool = entrants(12, owners=5)
    made = simulate(pool, Rules(max_sets_per_bot=2), rounds=400, finish_every=2)
    assert len(made) > 150  # about one table per finished set, once the pool is busy


def test_no_pair_repeats_while_others_wait_in_a_small_pool():
    pool = entrants(3)
    made = simulate(pool, Rules(max_sets_per_bot=1), rounds=60)
    pairs = Counter(frozenset(t) for t in made)
    assert len(pairs) == 3 and max(pairs.values()) - min(pairs.values()) <= 1


def test_two_bots_may_meet_again_and_again_when_nobody_else_waits():
    made = simulate(entrants(2), Rules(max_sets_per_bot=1), rounds=10)
    assert len(made) == 10


def test_bots_of_one_owner_never_meet_but_house_bots_do():
    same = [Entrant(bot=i, owner=7, rating=1500) for i in range(4)]
    assert Matchmaker(same, rules=Rules(), rng=random.Random(1)).next_table() is None
    house = [Entrant(bot=i, owner=None, rating=1500) for i in range(4)]
    assert Matchmaker(house, rules=Rules(), rng=random.Random(1)).next_table() is not None


def test_no_bot_exceeds_its_sets_in_flight():
    pool = entrants(10)
    tables = Matchmaker(pool, rules=Rules(max_sets_per_bot=3), rng=random.Random(2)).tables(100)
    load = Counter(b for t in tables for b in t)
    assert max(load.values()) <= 3
    assert len(tables) == 15  # 10 bots x 3 sets / 2 per set


def test_sets_already_in_flight_count():
    pool = [Entrant(bot=i, owner=i, rating=1500, in_flight=2 if i < 3 else 0) for i in range(5)]
    tables = Matchmaker(pool, rules=Rules(max_sets_per_bot=2), rng=random.Random(3)).tables(10)
    assert all(b >= 3 for t in tables for b in t)


def test_the_bot_most_in_need_is_served_first():
    pool = [
        Entrant(bot=1, owner=1, rating=1500, width=60, recent_sets=0),
        Entrant(bot=2, owner=2, rating=1500, width=300, recent_sets=9),  # widest interval
        Entrant(bot=3, owner=3, rating=1500, width=60, recent_sets=9),
        Entrant(bot=4, owner=4, rating=1500, width=60, new=True, recent_sets=30),  # new version
    ]
    matchmaker = Matchmaker(pool, rules=Rules(max_sets_per_bot=1), rng=random.Random(4))
    assert matchmaker.next_table()[0] == 4
    assert matchmaker.next_table()[0] == 2
    # with equal intervals, the fewest recent sets goes first
    even = [
        Entrant(bot=i, owner=i, rating=1500, width=80, recent_sets=r)
        for i, r in enumerate([5, 1, 3, 0])
    ]
    assert (
        Matchmaker(even, rules=Rules(max_sets_per_bot=1), rng=random.Random(5)).next_table()[0] == 3
    )


def test_opponents_are_near_in_rating_with_a_heavy_tail():
    pool = entrants(400, spacing=5)  # ratings 1500 .. 3495
    rng = random.Random(6)
    distances = []
    for _ in range(400):
        anchor = rng.randrange(100, 300)  # mid-pool: room on both sides
        current = [e if e.bot != anchor else Entrant(e.bot, e.owner, e.rating, new=True)
                   for e in pool]  # fmt: skip
        matchmaker = Matchmaker(current, rules=Rules(max_sets_per_bot=100, spread=100), rng=rng)
        a, b = matchmaker.next_table()
        assert a == anchor
        distances.append(abs(pool[a].rating - pool[b].rating))
    distances.sort()
    median = distances[len(distances) // 2]
    assert 50 <= median <= 160  # a Cauchy of scale 100 has median distance 100
    far = sum(d > 400 for d in distances) / len(distances)
    assert 0.08 < far < 0.25  # P(|Cauchy| > 4 scales) = 0.156: far-apart bots still meet


def test_same_seed_same_tables():
    pool = entrants(30, owners=7)
    first = Matchmaker(pool, rules=Rules(), rng=random.Random(9)).tables(20)
    again = Matchmaker(pool, rules=Rules(), rng=random.Random(9)).tables(20)
    assert first == again


def test_three_player_tables_obey_the_rules_pairwise():
    pool = entrants(9, owners=4)
    made = simulate(pool, Rules(max_sets_per_bot=1, table=3), rounds=100, finish_every=1)
    assert made and all(len(set(t)) == 3 for t in made)


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(2, 25),
    owners=st.integers(1, 25),
    cap=st.integers(1, 3),
    in_flight=st.lists(st.integers(0, 3), min_size=25, max_size=25),
    seed=st.integers(0, 2**32),
)
def test_any_pool_capacity_and_owners_hold_and_nothing_possible_is_left(
    count, owners, cap, in_flight, seed
):
    pool = [
        Entrant(bot=i, owner=i % owners, rating=random.Random(i).uniform(1000, 2000),
                width=math.inf, in_flight=min(in_flight[i], cap))
        for i in range(count)
    ]  # fmt: skip
    tables = Matchmaker(pool, rules=Rules(max_sets_per_bot=cap), rng=random.Random(seed)).tables(
        10_000
    )
    load = defaultdict(int, {e.bot: e.in_flight for e in pool})
    for a, b in tables:
        assert a % owners != b % owners
        load[a] += 1
        load[b] += 1
    assert all(n <= cap for n in load.values())
    # when it stops, no two bots with room and different owners are left
    free = [b for b in range(count) if load[b] < cap]
    assert len({b % owners for b in free}) <= 1


def test_partnership_tables_are_four_bots_of_four_owners():
    """A */4p ladder seats four different bots (partners rotating), never two of one owner."""
    from tournaments.services.ladder import ladder_rules

    pool = entrants(8, owners=5)
    rules = Rules(max_sets_per_bot=1, table=4)
    tables = Matchmaker(pool, rules=rules, rng=random.Random(3)).tables(2)
    assert tables
    for table in tables:
        assert len(set(table)) == 4 and len({pool[bot].owner for bot in table}) == 4
    assert ladder_rules(4).table == 4
