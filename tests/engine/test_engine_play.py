"""Scripted scenarios for the tricky cases of play, the state API, views and forfeits."""

import random

import pytest
from engine_positions import cards, classic, position
from hypothesis import given
from hypothesis import strategies as st

from games.engine import (
    Card,
    EscobaError,
    Game,
    IllegalMoveError,
    Move,
    Ruleset,
)
from games.engine.scoring import score_round, strict_winner
from games.engine.state import round_deck, round_outcome


def moves(texts):
    return [Move.from_str(text) for text in texts]


@pytest.mark.parametrize(
    ("preset", "hand", "table", "expected"),
    [
        # forced: a card that can make 15 has no trail; the others keep theirs
        ("classic", "5o 9c", "10e 6b", ["5o:10e", "9c:6b"]),
        ("classic", "5o 9c", "1e 2e", ["5o", "9c"]),
        # optional: every card may be trailed, after its captures
        ("casual", "5o 9c", "10e 6b", ["5o:10e", "5o", "9c:6b", "9c"]),
        # several ways to make 15, in canonical order of the captured cards
        ("classic", "3o", "2c 4c 5e 6b 8o", ["3o:2c+4c+6b", "3o:4c+8o"]),
        (
            "classic",
            "1o",
            "1c 1e 2o 2c 10b 4b",
            [
                "1o:1c+1e+2o+10b",
                "1o:1c+1e+2c+10b",
                "1o:2o+2c+10b",
                "1o:4b+10b",
            ],
        ),
        # equal values on the table are distinct captures
        ("classic", "5o", "5c 5e", ["5o:5c+5e"]),
        ("classic", "7o", "4c 4e 4b", ["7o:4c+4e", "7o:4c+4b", "7o:4e+4b"]),
        # an empty table: only trails
        ("classic", "1o 10b", "", ["1o", "10b"]),
    ],
)
def test_legal_moves_in_documented_order(preset, hand, table, expected):
    game = position(Ruleset.from_preset(preset), [hand, "1b"], table)
    assert [move.to_str() for move in game.legal_moves()] == expected


@pytest.mark.parametrize(
    ("move", "code"),
    [
        ("2c", "card_not_in_hand"),
        ("5o:10c", "cards_not_on_table"),
        ("5o:10e+6b", "sum_not_15"),
        ("9c:10e", "sum_not_15"),
        ("5o", "must_capture"),
    ],
)
def test_illegal_moves_say_why(move, code):
    game = position(classic(), ["5o 9c", "1b"], "10e 6b")
    with pytest.raises(IllegalMoveError) as caught:
        game.apply(Move.from_str(move))
    assert caught.value.code == code
    assert game.current_seat == 0 and len(game.hand(0)) == 2  # nothing changed


def test_applying_something_that_is_not_a_move():
    game = position(classic(), ["5o 9c", "1b"], "10e 6b")
    with pytest.raises(IllegalMoveError, match="not_a_move"):
        game.apply("5o:10e")


def test_a_sweep_late_in_the_round_is_an_escoba():
    three = Ruleset.from_preset("classic", {"players": 3})
    game = position(three, ["6o", "1c", "7b"], "3e 4c", turn=1)  # the deck is used up
    game.apply(Move.from_str("1c"))  # 1 needs 14: no capture
    game.apply(Move.from_str("7b:1c+3e+4c"))  # sweeps the table in the last deal
    assert game.table == []
    view = game.view(0)
    assert view.history[-1].escoba is True
    assert view.seats[2].escobas == 1
    game.apply(Move.from_str("6o"))  # the very last card: the table is not empty
    last = game.log()["rounds"][0]
    assert last["leftover"] == {"seat": 2, "cards": ["6o"]}
    assert last["score"][2]["escobas"] == 1
    assert game.round == 2


def test_the_first_player_of_every_deal_follows_the_dealer():
    game = Game.new(Ruleset.from_preset("classic", {"players": 3}), 21)
    seats = []
    while game.round == 1:
        seats.append(game.current_seat)
        game.apply(game.legal_moves()[0])
    assert seats == [1, 2, 0] * 12
    assert game.dealer == 1 and game.current_seat == 2


def test_deal_order_follows_the_documented_shuffle():
    game = Game.new(classic(), 42)
    deck = round_deck(42, 1)
    first = game.log()["rounds"][0]
    names = [str(Card.from_str(f"{c // 4 + 1}{'oceb'[c % 4]}")) for c in deck]
    assert first["deals"][0][1] == sorted(names[0:3], key=lambda t: Card.from_str(t).index)
    assert first["deals"][0][0] == sorted(names[3:6], key=lambda t: Card.from_str(t).index)
    assert first["table"] == sorted(names[6:10], key=lambda t: Card.from_str(t).index)
    assert sorted(round_deck(42, 1)) == list(range(40))
    assert round_deck(42, 1) != round_deck(42, 2) != round_deck(43, 2)


def test_same_seed_same_deals_whatever_is_played():
    ruleset = Ruleset.from_preset("classic", {"target": 40})
    logs = []
    for choice_seed in (1, 2):
        game, chooser = Game.new(ruleset, 99), random.Random(choice_seed)
        while game.round < 3:
            game.apply(chooser.choice(game.legal_moves()))
        logs.append(game.log())
    for first, second in zip(logs[0]["rounds"][:2], logs[1]["rounds"][:2], strict=True):
        assert (first["table"], first["deals"]) == (second["table"], second["deals"])
    assert logs[0]["rounds"][0]["plays"] != logs[1]["rounds"][0]["plays"]


@pytest.mark.parametrize(
    ("values", "winner"),
    [([14, 13, 13], 0), ([14, 14, 12], None), ([3, 3, 3], None), ([0, 5, 4], 1), ([2, 2], None)],
)
def test_most_means_strictly_more_than_each_other_side(values, winner):
    assert strict_winner(values) == winner


@given(st.lists(st.integers(-3, 3), max_size=5))
def test_the_strict_winner_is_the_one_value_above_every_other(values):
    above_all = [
        index
        for index, value in enumerate(values)
        if all(value > other for place, other in enumerate(values) if place != index)
    ]
    assert strict_winner(values) == (above_all[0] if above_all else None)
    assert strict_winner(tuple(values)) == strict_winner(values)


def test_three_player_ties_in_every_category():
    options = Ruleset.from_preset("classic", {"players": 3}).options
    piles = [
        _mask("1o 2o 7c 1c 2c 3c"),
        _mask("3o 4o 7e 1e 2e 3e"),
        _mask("5o 6o 7b 7o 1b"),
    ]
    score = score_round(options, piles, [1, 0, 1])
    assert [side["cards"] for side in score] == [6, 6, 5]
    assert [side["points"]["cards"] for side in score] == [0, 0, 0]
    assert [side["points"]["oros"] for side in score] == [0, 0, 1]
    assert [side["points"]["sevens"] for side in score] == [0, 0, 1]  # two sevens beat one
    assert [side["total"] for side in score] == [1, 0, 4]


@pytest.mark.parametrize(
    ("totals", "tie", "expected"),
    [
        ([21, 20], "extra_round", (0, "target")),
        ([25, 22], "extra_round", (0, "target")),  # both reached it: the higher wins
        ([22, 25], "shared", (1, "target")),
        ([22, 22], "extra_round", None),
        ([22, 22], "shared", (None, "shared")),
        ([20, 20], "shared", None),
        ([21, 21, 5], "extra_round", None),
        ([21, 22, 22], "extra_round", None),
        ([23, 22, 22], "extra_round", (0, "target")),
        ([3, 25, 25, 1], "shared", (None, "shared")),
    ],
)
def test_end_of_game_table(totals, tie, expected):
    options = Ruleset.from_preset("classic", {"tie": tie, "players": len(totals)}).options
    result = round_outcome(options, totals, 3)
    assert (result and (result.winner, result.reason)) == expected


def test_max_rounds_ends_in_a_draw():
    ruleset = Ruleset.from_preset("classic", {"max_rounds": 2, "target": 1000})
    game = Game.new(ruleset, 5)
    while not game.is_over:
        game.apply(game.legal_moves()[0])
    assert game.round == 2
    assert (game.result.winner, game.result.reason) == (None, "max_rounds")
    assert game.legal_moves() == [] and game.current_seat is None
    with pytest.raises(IllegalMoveError, match="game_over"):
        game.apply(Move.from_str("1o"))


def test_a_whole_game_reaches_the_target():
    game = Game.new(Ruleset.from_preset("classic", {"target": 15}), 8)
    chooser = random.Random(8)
    while not game.is_over:
        game.apply(chooser.choice(game.legal_moves()))
    result = game.result
    assert result.reason == "target"
    assert result.totals[result.winner] >= 15
    assert result.totals[result.winner] > result.totals[1 - result.winner]
    assert result.totals == game.log()["rounds"][-1]["totals"]


@pytest.mark.parametrize(
    ("players", "teams", "totals", "seat", "loser", "winner"),
    [
        (2, False, [5, 9], 1, 1, 0),
        (4, True, [5, 9], 2, 0, 1),
        (3, False, [4, 9, 2], 0, 0, 1),
        (3, False, [4, 9, 9], 0, 0, None),
        (3, False, [12, 9, 9], 0, 0, None),
        (4, False, [1, 2, 3, 7], 3, 3, 2),
    ],
)
def test_forfeit(players, teams, totals, seat, loser, winner):
    game = Game.new(Ruleset.from_preset("classic", {"players": players, "teams": teams}), 3)
    game._totals = list(totals)
    game.forfeit(seat, "faults")
    assert game.is_over and game.current_seat is None and game.legal_moves() == []
    result = game.result
    assert (result.reason, result.forfeit, result.forfeit_seat) == ("forfeit", loser, seat)
    assert result.winner == winner
    assert result.totals == totals
    logged = game.log()["result"]
    assert (logged["forfeit"], logged["forfeit_seat"], logged["forfeit_reason"]) == (
        loser,
        seat,
        "faults",
    )
    with pytest.raises(IllegalMoveError):
        game.forfeit(seat)


def test_forfeit_of_a_seat_that_does_not_exist():
    game = Game.new(classic(), 3)
    with pytest.raises(EscobaError):
        game.forfeit(2)


def test_view_shows_own_hand_and_public_facts_only():
    game = Game.new(Ruleset.from_preset("classic", {"players": 4, "teams": True}), 17)
    for _ in range(5):
        game.apply(game.legal_moves()[0])
    seat = game.current_seat
    view = game.view(seat)
    assert view.hand == game.hand(seat)
    assert view.table == game.table
    assert view.legal_moves == game.legal_moves()
    assert view.team == seat % 2 and view.round == 1 and view.dealer == 0
    assert view.deck_remaining == 24  # 12 cards dealt to the hands and 4 to the table
    assert [s.hand_size for s in view.seats] == [len(game.hand(s)) for s in range(4)]
    assert len(view.history) == 5
    other = (seat + 1) % 4
    other_view = game.view(other)
    assert other_view.legal_moves == []
    assert set(other_view.hand).isdisjoint(view.hand)
    with pytest.raises(EscobaError):
        game.view(4)


def test_clone_is_independent():
    game = Game.new(classic(), 23)
    for _ in range(7):
        game.apply(game.legal_moves()[0])
    copy = game.clone()
    assert copy.log() == game.log()
    before = game.log()
    while not copy.is_over:
        copy.apply(copy.legal_moves()[-1])
    assert game.log() == before
    game.apply(game.legal_moves()[0])
    assert len(game.log()["rounds"][0]["plays"]) == 8
    assert len(copy.log()["rounds"][0]["plays"]) == 36


def test_legal_moves_returns_a_fresh_list():
    game = Game.new(classic(), 2)
    moves_now = game.legal_moves()
    moves_now.clear()
    assert game.legal_moves()
    game.apply(game.legal_moves()[0])


def test_new_game_checks_its_arguments():
    with pytest.raises(EscobaError):
        Game.new(classic(), "7")
    with pytest.raises(EscobaError):
        Game.new({"name": "classic"}, 7)


def _mask(text):
    return sum(1 << card.index for card in cards(text))


@pytest.mark.parametrize(
    ("before", "tie", "after", "outcome"),
    [
        ([19, 19], "extra_round", [22, 21], (0, "target")),  # both reach 21: the higher wins
        ([18, 19], "extra_round", [21, 21], None),  # equal: another round is dealt
        ([18, 19], "shared", [21, 21], (None, "shared")),
        ([10, 19], "extra_round", [13, 21], (1, "target")),
        ([10, 10], "extra_round", [13, 12], None),
    ],
)
def test_the_last_play_of_a_round_scores_it_and_decides_the_game(before, tie, after, outcome):
    """Played through the Game: seat 0 takes 7o+8e (3 points: oros, 7 of oros, setenta), seat 1
    sweeps with 5e+10b and takes the leftover as the last capturer (2 points: cards, escoba)."""
    game = position(classic(tie=tie), ["7o 1c", "5e 2b"], "8e 10b")
    game._totals = list(before)
    for text in ("7o:8e", "5e:10b", "1c", "2b"):
        game.apply(Move.from_str(text))
    first = game.log()["rounds"][0]
    assert first["leftover"] == {"seat": 1, "cards": ["1c", "2b"]}
    assert [side["total"] for side in first["score"]] == [3, 2]
    assert first["totals"] == after
    if outcome is None:
        assert not game.is_over and game.round == 2 and game.dealer == 1
        assert game.totals == after
    else:
        assert (game.result.winner, game.result.reason, game.result.totals) == (*outcome, after)
        assert game.current_seat is None and len(game.log()["rounds"]) == 1


def test_big_wins_through_a_whole_round():
    """A's big wins: 30+ cards against under 10, all ten oros, all four sevens (3 with the 7 of
    oros), scored from real play rather than from piles."""
    ruleset = Ruleset.from_preset("classic", {"big_wins": True})
    game = position(ruleset, ["7o", "1c"], "8o")
    loser = _mask("2c 3c 4c 5c 6c 8c 9c 10c 2e")
    in_play = _mask("7o 8o 1c")
    game._captured = [(1 << 40) - 1 - loser - in_play, loser]
    game.apply(Move.from_str("7o:8o"))
    game.apply(Move.from_str("1c"))
    winner, loser = game.log()["rounds"][0]["score"]
    assert (winner["cards"], winner["oros"], winner["sevens"]) == (31, 10, 4)
    assert winner["points"] == {
        "cards": 2, "oros": 2, "seven_of_oros": 1, "sevens": 2, "escobas": 1,
    }  # fmt: skip
    assert loser["cards"] == 9 and loser["total"] == 0


def test_views_and_logs_stay_right_when_the_play_cache_is_emptied(monkeypatch):
    from games.engine import state

    game = Game.new(classic(), 31)
    expected_history = []
    while game.round == 1:
        seat = game.current_seat
        move = game.legal_moves()[-1]
        game.apply(move)
        expected_history.append((seat, str(move)))
    reference = game.log()
    monkeypatch.setattr(state, "_PLAY_LIMIT", 3)
    state._PLAY_VIEWS.clear()
    copy = Game.new(classic(), 31)
    for seat, text in expected_history[:-1]:
        copy.apply(Move.from_str(text))
        history = copy.view(seat).history
        assert (history[-1].seat, history[-1].card) == (seat, Move.from_str(text).card)
    copy.apply(Move.from_str(expected_history[-1][1]))
    assert copy.log() == reference
    assert len(state._PLAY_VIEWS) <= 3
