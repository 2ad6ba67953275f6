"""The chance-event corrections the luck benchmark measures (benchmarks/luck_chance.py): the
random outcome of an event is dealt from exactly the cards the actual one came from, and the
corrections average zero over deals, whatever V."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.luck_chance import chance_events, coupled_corrections, resampled
from games.engine import Game, Ruleset

RULESET = Ruleset.from_preset("classic", {"players": 2})


def random_codes(seed: int) -> list[int]:
    """The play codes of a game of uniformly random moves on deal ``seed``."""
    game = Game.new(RULESET, seed)
    game.play_random(random.Random(seed), -1, True)
    return [code for record in game._rounds for code in record.plays]


def undealt(game: Game) -> set[int]:
    return set(game._deck[game._deck_position :])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**40), draw=st.integers(0, 2**32))
def test_a_random_outcome_is_dealt_from_the_cards_the_actual_one_came_from(seed, draw):
    rng = random.Random(draw)
    events = 0
    for before, move, after in chance_events(RULESET, seed, random_codes(seed)):
        other = resampled(RULESET, before, move, rng)
        assert other.round == after.round and other.totals == after.totals
        assert sorted(other._deck) == list(range(40))
        if before is not None and after.round == before.round:  # a later deal of the round
            events += 1
            pool = undealt(before)
            dealt = {card for hand in other._hands for card in hand}
            assert dealt <= pool and len(dealt) == 6
            assert undealt(other) == pool - dealt
            # only the cards dealt differ: the table and what was taken are the actual ones
            assert other._table == after._table and other._captured == after._captured
    assert events > 0


def test_the_same_game_always_gets_the_same_corrections():
    """Seeded by the deal, so a rerun of the benchmark reads the same figures; a different
    deal of the same plays is another game with other corrections."""
    seed = 11
    codes = random_codes(seed)
    found = coupled_corrections(RULESET, seed, codes, plays=(1, 2), greedy=True)
    assert found == coupled_corrections(RULESET, seed, codes, plays=(1, 2), greedy=True)
    assert len(found) == 2 and found != [0.0, 0.0]


def test_the_corrections_average_zero_over_deals():
    """Unbiased whatever V: over many deals the summed corrections (seat 0's round points)
    average zero within four standard errors, the random and the greedy rollouts alike."""
    for greedy in (False, True):
        sums = [
            coupled_corrections(RULESET, seed, random_codes(seed), plays=(1,), greedy=greedy)[0]
            for seed in range(7_000, 7_150)
        ]
        mean = sum(sums) / len(sums)
        spread = math.sqrt(sum((x - mean) ** 2 for x in sums) / (len(sums) - 1))
        assert spread > 0
        assert abs(mean) < 4 * spread / math.sqrt(len(sums)), (greedy, mean, spread)


def test_random_outcomes_deal_cards_as_the_deck_does():
    """The corrections are unbiased because a random outcome has the law of the actual one:
    over many events the hands dealt hold the same card values on average, actual or drawn,
    to within four standard errors (a draw that favoured some cards would show)."""
    rng = random.Random(5)
    gaps = []
    for seed in range(8_000, 8_060):
        for before, move, after in chance_events(RULESET, seed, random_codes(seed)):
            other = resampled(RULESET, before, move, rng)
            gaps.append(hand_values(after) - hand_values(other))
    mean = sum(gaps) / len(gaps)
    spread = math.sqrt(sum((x - mean) ** 2 for x in gaps) / (len(gaps) - 1))
    assert abs(mean) < 4 * spread / math.sqrt(len(gaps)), (mean, spread, len(gaps))


def hand_values(game: Game) -> int:
    """The summed values (1 to 10) of the cards in every hand."""
    return sum(card // 4 + 1 for hand in game._hands for card in hand)
