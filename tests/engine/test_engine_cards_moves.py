"""Cards and moves: canonical text forms, strict parsing, the French display labels."""

import copy
import pickle

import pytest

from games.engine import (
    ALL_CARDS,
    Card,
    EscobaError,
    InvalidCardError,
    InvalidMoveError,
    Move,
    french_label,
)


def test_deck_has_forty_distinct_cards_in_canonical_order():
    texts = [str(card) for card in ALL_CARDS]
    assert len(set(texts)) == 40
    assert texts[:5] == ["1o", "1c", "1e", "1b", "2o"]
    assert texts[-1] == "10b"
    assert [card.index for card in ALL_CARDS] == list(range(40))
    assert sorted(ALL_CARDS, key=lambda c: (c.value, "oceb".index(c.suit))) == list(ALL_CARDS)
    assert sum(card.value for card in ALL_CARDS) == 220


def test_card_parsing_returns_the_single_interned_card():
    card = Card.from_str("7o")
    assert card is Card.from_str("7o") is Card.of(7, "o")
    assert (card.value, card.suit, str(card)) == (7, "o", "7o")
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card


@pytest.mark.parametrize(
    "text", ["", "7", "o7", "0o", "11o", "7x", "7O", " 7o", "7o ", "07o", "10", "1.0o", None, 7]
)
def test_card_parsing_is_strict(text):
    with pytest.raises(InvalidCardError):
        Card.from_str(text)


def test_card_errors_are_value_errors_of_the_engine():
    with pytest.raises(EscobaError):
        Card.from_str("8x")
    with pytest.raises(ValueError):
        Card.from_str("8x")


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("1o", "A\u2666"),
        ("7o", "7\u2666"),
        ("2c", "2\u2665"),
        ("8e", "J\u2660"),
        ("9b", "Q\u2663"),
        ("10c", "K\u2665"),
    ],
)
def test_french_labels_follow_documents_a_and_c(text, label):
    assert french_label(Card.from_str(text)) == label


def test_move_text_and_wire_forms():
    move = Move.from_str("7o:5e+3c")
    assert move.card is Card.from_str("7o")
    assert move.capture == (Card.from_str("3c"), Card.from_str("5e"))
    assert move.to_str() == "7o:3c+5e"
    assert move.to_wire() == {"card": "7o", "capture": ["3c", "5e"]}
    assert Move.from_wire({"card": "7o", "capture": ["5e", "3c"]}) is move
    assert Move(Card.from_str("7o"), cards_of("5e 3c")) is move


def test_trail_forms():
    trail = Move.from_str("4b")
    assert trail.capture == () and trail.is_trail
    assert trail.to_wire() == {"card": "4b", "capture": []}
    assert Move.from_wire({"card": "4b"}) is trail
    assert Move.from_wire({"card": "4b", "capture": None}) is trail
    assert Move.from_wire({"card": "4b", "capture": []}) is trail


def test_moves_are_immutable_and_survive_pickle_and_copy():
    move = Move.from_str("1o:4e+10b")
    with pytest.raises(AttributeError):
        move.card = Card.from_str("2o")
    assert pickle.loads(pickle.dumps(move)) is move
    assert copy.deepcopy(move) is move


@pytest.mark.parametrize(
    "text", ["", ":", "7o:", "7o:3c+", "7o:3c+3c", "7o:7o", "7o;3c", "7o:3x", "x", "7o:3c:5e"]
)
def test_malformed_move_text(text):
    with pytest.raises(InvalidMoveError):
        Move.from_str(text)


@pytest.mark.parametrize(
    "data",
    [
        "7o",
        {"capture": []},
        {"card": 7},
        {"card": "7o", "capture": "3c"},
        {"card": "7o", "capture": ["3c", "3c"]},
        {"card": "7o", "capture": ["8x"]},
        {"card": "7o", "capture": [], "extra": 1},
    ],
)
def test_malformed_wire_moves(data):
    with pytest.raises(InvalidMoveError):
        Move.from_wire(data)


def cards_of(text):
    return [Card.from_str(part) for part in text.split()]
