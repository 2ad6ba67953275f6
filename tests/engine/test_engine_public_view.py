"""The public view of a game in play (games/public_view.py): what every seat sees, checked
against the engine's own log, and nothing of the hands."""

from __future__ import annotations

import json
import random

import pytest

from games.engine import EscobaError, Game, Ruleset
from games.public_view import PublicGame

CLASSIC = {"name": "classic", "version": 1}


@pytest.mark.parametrize("seed", range(12))
def test_the_public_game_is_the_engine_log_without_hands(seed):
    """Plays, escobas, each round's score and the result as the engine logs them; deals only as
    face-down cards of the right count; a forfeit on odd seeds."""
    ruleset = Ruleset.from_dict(CLASSIC)
    game, public = Game.new(ruleset, seed), PublicGame(ruleset, seed)
    choices = random.Random(seed)
    while not game.is_over:
        if seed % 2 and len(game.log()["rounds"]) == 2:
            seat = game.current_seat
            game.forfeit(seat, "faults")
            public.forfeit(seat)
            break
        move = choices.choice(game.view(game.current_seat).legal_moves)
        game.apply(move)
        change = json.loads(json.dumps(public.play(move.to_str(), None)))
        assert set(change) >= {"round", "play", "meta"}
    log = game.log()
    doc = json.loads(json.dumps(public.doc))
    assert doc["result"] == log["result"]
    assert "seed" not in doc
    for mine, theirs in zip(doc["rounds"], log["rounds"], strict=True):
        assert {k: v for k, v in mine.items() if k != "deals"} == {
            k: v for k, v in theirs.items() if k != "deals"
        }
        assert [[len(hand) for hand in deal] for deal in mine["deals"]] == [
            [len(hand) for hand in deal] for deal in theirs["deals"]
        ]
        assert all(card is None for deal in mine["deals"] for hand in deal for card in hand)


def test_no_card_of_a_hand_is_in_the_public_view():
    """No card a seat holds is named in the round being played: the document names a card of
    this round's deals only once it is played (earlier rounds dealt the same cards again)."""
    ruleset = Ruleset.from_dict(CLASSIC)
    game, public = Game.new(ruleset, 3), PublicGame(ruleset, 3)
    choices = random.Random(3)
    while not game.is_over:
        move = choices.choice(game.view(game.current_seat).legal_moves)
        game.apply(move)
        public.play(move.to_str(), None)
        if game.is_over:
            break
        shown = json.dumps(public.doc["rounds"][-1])
        for seat in range(2):
            for card in game.view(seat).hand:
                assert f'"{card}"' not in shown, (seat, str(card))


def test_a_move_the_engine_refuses_raises_its_error():
    public = PublicGame(Ruleset.from_dict(CLASSIC), 1)
    with pytest.raises(EscobaError):
        public.play("1o", None)
