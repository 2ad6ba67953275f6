"""Each round's score breakdown in the log (best cards, setenta order, bonuses): what the engine
computed, consistent with the points it gave, and an addition older logs may lack."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Card, Game, InvalidLogError, Ruleset, validate_log
from games.engine.scoring import BREAKDOWN_KEYS, PRIMERA_VALUES, add_score_breakdown, score_round
from tests.engine.properties import rulesets

SUITS = "oceb"
# A's setenta ranking of values, best first; the face cards count alike.
SETENTA = [7, 6, 1, 5, 4, 3, 2, 10, 9, 8]


def played(ruleset: Ruleset, seed: int) -> dict:
    game = Game.new(ruleset, seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_moves()))
    return json.loads(json.dumps(game.log()))


def rank(card: str) -> int:
    return SETENTA.index(Card.from_str(card).value)


@settings(max_examples=30, deadline=None)
@given(ruleset=rulesets(), seed=st.integers(0, 2**40))
def test_the_breakdown_agrees_with_the_points(ruleset, seed):
    options = ruleset.options
    for game_round in played(ruleset, seed)["rounds"]:
        if game_round["score"] is None:
            continue
        for side in game_round["score"]:
            best, ranked = side["best_cards"], side["setenta_cards"]
            assert [None if card is None else card[-1] for card in best] == [
                suit if card is not None else None for suit, card in zip(SUITS, best, strict=True)
            ]
            assert side["primera"] == sum(
                PRIMERA_VALUES[Card.from_str(card).value] for card in best if card
            )
            assert sorted(ranked) == sorted(card for card in best if card)
            assert [rank(card) for card in ranked] == sorted(rank(card) for card in ranked)
            for key, bonus in side["bonus"].items():
                won = side["points"][key] - bonus
                assert bonus in (0, 1)
                assert won in (0, 1) or (key == "sevens" and options["sevens"] == "per_suit")
                assert not bonus or won == 1
        if options["sevens"] == "setenta":
            # Setenta compares best card against best card; the face cards count alike.
            keys = [[min(rank(card), 7) for card in side["setenta_cards"]] + [99] * 4
                    for side in game_round["score"]]  # fmt: skip
            keys = [key[:4] for key in keys]
            best_key = min(keys)
            winners = [side for side, key in zip(game_round["score"], keys, strict=True)
                       if key == best_key]  # fmt: skip
            points = [side["points"]["sevens"] for side in game_round["score"]]
            if len(winners) == 1:
                assert winners[0]["points"]["sevens"] >= 1
            else:
                assert not any(points)


def test_the_best_card_of_a_suit_is_its_highest_primera_value_the_rey_among_faces():
    options = Ruleset.from_preset("classic").options
    piles = [["7o", "6o", "10c", "8c", "9c", "1e"], ["2b", "3b"]]
    masks = [sum(1 << Card.from_str(card).index for card in pile) for pile in piles]
    score = score_round(options, masks, [0, 0])
    add_score_breakdown(options, masks, score)
    assert score[0]["best_cards"] == ["7o", "10c", "1e", None]
    assert score[0]["setenta_cards"] == ["7o", "1e", "10c"]
    assert score[1]["best_cards"] == [None, None, None, "3b"]


def test_bonuses_are_the_second_point_of_a_category():
    options = Ruleset.from_preset("bonus").options  # all oros and all sevens are bonuses
    every_oro = [f"{value}o" for value in range(1, 11)] + ["7c", "7e", "7b"]
    rest = ["1c", "2c"]
    masks = [sum(1 << Card.from_str(card).index for card in pile) for pile in (every_oro, rest)]
    score = score_round(options, masks, [0, 0])
    add_score_breakdown(options, masks, score)
    assert score[0]["points"]["oros"] == 2 and score[0]["bonus"]["oros"] == 1
    assert score[0]["points"]["sevens"] == 2 and score[0]["bonus"]["sevens"] == 1
    assert score[0]["bonus"]["cards"] == 0 and score[1]["bonus"] == {
        "cards": 0, "oros": 0, "sevens": 0,
    }  # fmt: skip


@pytest.fixture(scope="module")
def log() -> dict:
    return played(Ruleset.from_preset("bonus", {"players": 4, "teams": True}), 5)


def test_a_log_written_before_the_breakdown_still_replays(log):
    old = copy.deepcopy(log)
    for game_round in old["rounds"]:
        for side in game_round["score"] or []:
            for key in BREAKDOWN_KEYS:
                del side[key]
    validate_log(old)
    validate_log(log)


@pytest.mark.parametrize("key", BREAKDOWN_KEYS)
def test_a_partly_missing_or_wrong_breakdown_is_invalid(log, key):
    partial = copy.deepcopy(log)
    del partial["rounds"][0]["score"][1][key]
    with pytest.raises(InvalidLogError, match="score"):
        validate_log(partial)
    wrong = copy.deepcopy(log)
    side = wrong["rounds"][0]["score"][0]
    side[key] = {"cards": 1, "oros": 1, "sevens": 1} if key == "bonus" else list(
        reversed(side[key])
    )  # fmt: skip
    if side[key] != log["rounds"][0]["score"][0][key]:
        with pytest.raises(InvalidLogError, match="score"):
            validate_log(wrong)
