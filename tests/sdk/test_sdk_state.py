"""`BotState`: the typed view of a move request, and the `Bot` glue around `choose`."""

from __future__ import annotations

import random

import pytest

from bots_sdk import Bot, BotError, BotState, Card, Move, ProtocolError, bot
from games.engine import ALL_CARDS, Game, Ruleset
from games.wire import move_request


def test_fields_are_engine_values(sample_request):
    state = BotState.from_request(sample_request)
    assert state.hand == tuple(Card.from_str(text) for text in ("3c", "7o", "10b"))
    assert state.hand[1] is Card.from_str("7o")  # the engine's own interned card
    assert state.table == tuple(Card.from_str(text) for text in ("1e", "3b", "4b", "5e"))
    assert state.legal_moves[2] is Move.from_str("7o:3b+5e")
    assert (state.game_id, state.match_id, state.round) == ("41", "12", 2)
    assert (state.seat, state.team, state.dealer, state.deck_remaining) == (0, 0, 1, 24)
    assert state.scores == (3, 5)
    assert state.seats[1].escobas == 1
    assert state.history[0].card is Card.from_str("6c")
    assert state.history[0].capture == (Card.from_str("2b"), Card.from_str("7e"))
    assert state.history[0].escoba is True
    assert (state.latency_ms, state.time_bank_ms, state.timeout_ms) == (1.25, 1000, 1000)
    assert state.options == {"target": 21}
    assert state.raw is sample_request


def test_helpers(sample_request):
    state = BotState.from_request(sample_request)
    assert state.players == 2
    assert state.next_seat == 1
    assert state.seat_info(1).name == "them"
    assert state.trails == ()
    assert len(state.captures) == 5
    assert state.is_sweep(Move.from_str("7o:1e+3b+4b")) is False
    sweep = Move(Card.from_str("2o"), [Card.from_str(t) for t in ("1e", "3b", "4b", "5e")])
    assert state.is_sweep(sweep)
    assert state.table_after(Move.from_str("10b:5e")) == tuple(
        Card.from_str(t) for t in ("1e", "3b", "4b")
    )
    assert state.table_after(Move.from_str("3c"))[-1] is Card.from_str("3c")
    seen = {"3c", "7o", "10b", "1e", "3b", "4b", "5e", "6c", "2b", "7e", "1o", "2o", "6o", "7b"}
    assert {str(card) for card in state.seen_cards()} == seen
    unseen = state.unseen_cards()
    assert len(unseen) == 40 - len(seen)
    assert unseen == sorted(unseen)


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda body: body.pop("you"), "you"),
        (lambda body: body["you"].pop("hand"), "hand"),
        (lambda body: body["you"]["hand"].append("11o"), "you.hand[3]"),
        (lambda body: body.update(round="2"), "round"),
        (lambda body: body.update(protocol="escoba/2"), "escoba/1"),
        (
            lambda body: body["legal_moves"].append({"card": "7o", "capture": "3b"}),
            "legal_moves[5]",
        ),
        (lambda body: body["history"][0].pop("escoba"), "history[0]"),
    ],
)
def test_a_broken_body_names_the_field(sample_request, change, field):
    change(sample_request)
    with pytest.raises(ProtocolError, match=field.replace("[", r"\[").replace("]", r"\]")):
        BotState.from_request(sample_request)


def test_not_an_object():
    with pytest.raises(ProtocolError):
        BotState.from_request(["escoba/1"])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_matches_the_engine_view_on_every_turn(players):
    """Through the wire and back: what a bot reads is exactly the seat's engine view."""
    ruleset = Ruleset.from_preset("classic", {"players": players, "teams": players == 4})
    game = Game.new(ruleset, seed=11)
    rng = random.Random(5)
    names = [f"bot{seat}" for seat in range(players)]
    for _ in range(60):
        view = game.view(game.current_seat)
        body = move_request(
            view,
            game_id=7,
            timeout_ms=500,
            seat_names=names,
            latency_ms=2.5,
            time_bank_ms=400,
        )
        state = BotState.from_request(body)
        assert state.hand == tuple(view.hand)
        assert state.table == tuple(view.table)
        assert state.legal_moves == tuple(view.legal_moves)
        assert state.history == tuple(view.history)
        assert state.scores == tuple(view.scores)
        assert state.seats[state.next_seat].seat == (view.seat + 1) % players
        assert state.seen_cards().isdisjoint(state.unseen_cards())
        assert len(state.seen_cards()) + len(state.unseen_cards()) == len(ALL_CARDS)
        game.apply(rng.choice(game.legal_moves()))
        if game.is_over:
            break


def test_bot_names_and_info():
    assert Bot(lambda state: "1o").name == "test_sdk_state"
    named = bot(name="mine", author="ana", version="3")(lambda state: "1o")
    assert named.info() == {"protocol": "escoba/1", "name": "mine", "author": "ana", "version": "3"}


def test_bot_move_checks_the_answer(sample_request):
    assert Bot(lambda state: state.legal_moves[1]).move(sample_request) == {
        "card": "7o",
        "capture": ["1e", "3b", "4b"],
    }
    assert Bot(lambda state: "7o:3b+5e").move(sample_request) == {
        "card": "7o",
        "capture": ["3b", "5e"],
    }
    with pytest.raises(BotError, match="not a legal move"):
        Bot(lambda state: "3c").move(sample_request)


def test_no_legal_moves_is_a_protocol_error(sample_request):
    sample_request["legal_moves"] = []
    with pytest.raises(ProtocolError, match="legal_moves"):
        Bot(lambda state: "3c").move(sample_request)


def test_unseen_cards_are_exactly_the_other_hands_and_the_deck():
    """Card counting is exact, lucky deals included: seed 10 opens with one (1c 2e 3e 9o)."""
    ruleset = Ruleset.from_preset("classic", {})
    rng = random.Random(3)
    lucky_rounds = 0
    for seed in (10, 26, 31):
        game = Game.new(ruleset, seed=seed)
        while not game.is_over:
            seat = game.current_seat
            lucky = game.view(seat).lucky_deal
            lucky_rounds += lucky is not None and not game.log()["rounds"][-1]["plays"]
            body = move_request(
                game.view(seat), game_id=1, timeout_ms=500, seat_names=["a", "b"],
                latency_ms=None, time_bank_ms=500,
            )  # fmt: skip
            state = BotState.from_request(body)
            current = game.log()["rounds"][-1]
            dealt = {card for deal in current["deals"] for hand in deal for card in hand}
            deck = {str(card) for card in ALL_CARDS} - dealt - set(current["table"])
            others = {str(card) for card in game.hand(1 - seat)}
            assert {str(card) for card in state.unseen_cards()} == deck | others
            game.apply(rng.choice(game.legal_moves()))
    assert lucky_rounds >= 1
