"""One copy of the expert: the SDK's example bot and the rating baseline's engine-level policy
(``games.expert``) are the same player, move for move, and the baseline's play of a deal never
changes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games.expert
from bots_sdk.examples import expert
from bots_sdk.local import play_game
from games.engine import Game, Ruleset
from games.expert import expert_move, expert_totals


def test_the_sdk_expert_scores_with_the_games_copy():
    assert expert.score_move is games.expert.score_move
    assert expert.Weights is games.expert.Weights
    assert expert.chance_of_value is games.expert.chance_of_value


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", [7, 2026, 31337])
def test_the_engine_policy_plays_every_deal_as_the_sdk_bot_does(players, seed):
    """The SDK bot reads each position from a parsed move request (``BotState``), the engine
    policy from the game's own view of the seat: the same moves, so the same game."""
    ruleset = Ruleset.from_preset("classic", {"players": players, "teams": players == 4})
    found = play_game([expert.choose] * players, seed=seed, game_id=str(seed), ruleset=ruleset)
    assert found.totals == expert_totals(ruleset, seed)


@given(st.integers(0, 2**63 - 1), st.integers(0, 60))
@settings(max_examples=30, deadline=None)
def test_the_engine_policy_plays_a_legal_move(seed, plays):
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    game = Game.new(ruleset, seed)
    game.play_random(random.Random(seed), plays, True)
    if game.is_over:
        with pytest.raises(ValueError):
            expert_move(game)
        return
    assert expert_move(game) in game.legal_moves()


def test_the_baseline_play_of_a_deal_is_deterministic():
    ruleset = Ruleset.from_preset("classic", {"players": 2})
    assert expert_totals(ruleset, 99) == expert_totals(ruleset, 99)
    assert sum(expert_totals(ruleset, 99)) > 0
