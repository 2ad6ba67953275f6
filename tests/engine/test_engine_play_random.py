"""``Game.play_random``: the engine's own uniform random play is the Python loop over
``legal_moves()`` and ``apply()`` with the same generator, move for move, and stops where it says.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from properties import check_cards_conserved, rulesets

from games.engine import Determinizer, EscobaError, Game, Ruleset


def play_in_python(game, rng, plays=-1, to_game_end=False):
    """What ``play_random`` promises to do, written with the public API."""
    number = game.round
    made = 0
    while made != plays and not game.is_over and (to_game_end or game.round == number):
        moves = game.legal_moves()
        game.apply(moves[int(rng.random() * len(moves))])
        made += 1
    return made


def played_to(ruleset, seed, prefix):
    """A game of ``ruleset`` after ``prefix`` random plays of its own (fewer if it ends)."""
    game = Game.new(ruleset, seed)
    play_in_python(game, random.Random(seed), plays=prefix, to_game_end=True)
    return game


@settings(max_examples=150, deadline=None)
@given(
    ruleset=rulesets(),
    seed=st.integers(0, 2**64),
    prefix=st.integers(0, 120),
    plays=st.integers(-1, 40),
    to_game_end=st.booleans(),
)
def test_play_random_plays_what_the_python_loop_plays(ruleset, seed, prefix, plays, to_game_end):
    engine = played_to(ruleset, seed, prefix)
    python = engine.clone()
    engine_rng, python_rng = random.Random(seed + 1), random.Random(seed + 1)

    made = engine.play_random(engine_rng, plays, to_game_end)

    assert made == play_in_python(python, python_rng, plays, to_game_end)
    assert engine.log() == python.log()
    assert engine.current_seat == python.current_seat
    assert engine_rng.getstate() == python_rng.getstate()  # one draw a play, no more
    check_cards_conserved(engine)


def test_by_default_it_plays_the_round_out_and_scores_it():
    game = Game.new(Ruleset.from_preset("classic"), 11)
    game.apply(game.legal_moves()[0])

    made = game.play_random(random.Random(3))

    assert made == 35  # 40 cards less the table's 4 and the play above
    assert game.round == 2 or game.is_over
    assert game.log()["rounds"][0]["totals"] is not None
    assert len(game.log()["rounds"][0]["plays"]) == 36


def test_to_the_game_end_and_after_it():
    game = Game.new(Ruleset.from_preset("del15", {"players": 3}), 5)

    made = game.play_random(random.Random(5), to_game_end=True)

    assert game.is_over
    assert made == sum(len(record["plays"]) for record in game.log()["rounds"])
    rng = random.Random(1)
    state = rng.getstate()
    assert game.play_random(rng, to_game_end=True) == 0
    assert rng.getstate() == state


def test_no_plays_asked_none_made():
    game = Game.new(Ruleset.from_preset("classic"), 2)
    before = game.log()
    rng = random.Random(2)
    state = rng.getstate()

    assert game.play_random(rng, 0) == 0

    assert game.log() == before
    assert rng.getstate() == state


def test_a_rollout_from_a_determinized_sample_leaves_the_sample_alone():
    game = played_to(Ruleset.from_preset("classic", {"players": 4, "teams": True}), 8, 9)
    sampler = Determinizer(game.view(game.current_seat))
    sample = sampler.sample(random.Random(4))
    rollout = sample.clone()

    made = rollout.play_random(random.Random(4))

    assert made > 0
    assert rollout.round == sample.round + 1 or rollout.is_over
    assert sample.view(sample.current_seat) == game.view(game.current_seat)
    check_cards_conserved(sample)


def test_what_it_is_given_is_checked_in_our_words():
    game = Game.new(Ruleset.from_preset("classic"), 1)
    before = game.log()

    with pytest.raises(EscobaError, match="needs a random.Random"):
        game.play_random(7)
    with pytest.raises(EscobaError, match="plays must be an int"):
        game.play_random(random.Random(1), 2.5)
    with pytest.raises(EscobaError, match="plays must be an int"):
        game.play_random(random.Random(1), True)

    class OutOfRange:
        def random(self):
            return 1.0

    with pytest.raises(EscobaError, match=r"must be in \[0, 1\), not 1.0"):
        game.play_random(OutOfRange())
    assert game.log() == before


def test_more_plays_than_a_game_has_is_no_limit():
    game = Game.new(Ruleset.from_preset("classic"), 3)
    other = game.clone()

    assert game.play_random(random.Random(3), 10**30) == other.play_random(random.Random(3))
    assert game.log() == other.log()
