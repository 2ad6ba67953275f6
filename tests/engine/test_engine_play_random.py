"""``Game.play_random``: the engine's own uniform random play is the Python loop over
``legal_moves()`` and ``apply()`` with the same generator, move for move, and stops where it says.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from properties import check_cards_conserved, rulesets

from games.engine import BUILD, Determinizer, EscobaError, Game, Ruleset

ROOT = Path(__file__).resolve().parents[2]


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


class BreaksAfter:
    """A generator of a caller's that raises after ``draws`` draws."""

    def __init__(self, seed, draws):
        self.rng = random.Random(seed)
        self.left = draws

    def random(self):
        if self.left == 0:
            raise RuntimeError("the generator broke")
        self.left -= 1
        return self.rng.random()


@settings(max_examples=60, deadline=None)
@given(
    ruleset=rulesets(),
    seed=st.integers(0, 2**64),
    prefix=st.integers(0, 120),
    draws=st.integers(0, 80),
)
def test_a_generator_failing_mid_play_leaves_the_game_whole(ruleset, seed, prefix, draws):
    """The compiled build plays a round on C arrays and writes it back when it stops, by an
    exception too: the game is where the Python loop leaves it after as many plays, and plays on
    from there the same."""
    engine = played_to(ruleset, seed, prefix)
    python = engine.clone()

    try:
        engine.play_random(BreaksAfter(seed, draws), to_game_end=True)
        raised = False
    except RuntimeError:
        raised = True
    play_in_python(python, random.Random(seed), plays=draws, to_game_end=True)

    assert raised == (not python.is_over)  # only the game's end stops it before the failure
    assert engine.log() == python.log()
    assert engine.current_seat == python.current_seat
    assert engine.legal_moves() == python.legal_moves()
    check_cards_conserved(engine)
    engine.play_random(random.Random(seed + 1), to_game_end=True)
    play_in_python(python, random.Random(seed + 1), to_game_end=True)
    assert engine.log() == python.log()


_FRESH_PROCESS = """
import json
import random
import sys

from games.engine import BUILD, Game, Ruleset

game = Game.new(Ruleset.from_preset(sys.argv[1]), 42)
game.play_random(random.Random(42), to_game_end=True)
print(BUILD)
print(json.dumps(game.log()))
history = game.view(0).history
print(json.dumps([[str(p.card), [str(c) for c in p.capture], p.escoba] for p in history]))
"""


@pytest.mark.parametrize("preset", ["classic", "del15"])
def test_plays_whose_moves_were_never_looked_up_are_logged_and_shown(preset):
    """In a fresh process no capture has been looked up yet, and the compiled ``play_random``
    records plays without looking up their moves: its log and a view's history must still name
    every card, as the Python loop's do."""
    process = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, preset],
        cwd=ROOT,
        env={**os.environ, "ESCOBA_ENGINE": BUILD},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    build, log, history = process.stdout.splitlines()
    game = Game.new(Ruleset.from_preset(preset), 42)
    play_in_python(game, random.Random(42), to_game_end=True)
    assert build == BUILD
    assert log == json.dumps(game.log())
    shown = [[str(p.card), [str(c) for c in p.capture], p.escoba] for p in game.view(0).history]
    assert json.loads(history) == shown


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
