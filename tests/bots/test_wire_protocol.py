"""The escoba/1 wire format: golden request bodies, schemas, and the reply parsers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import orjson
import pytest

from games.engine import Game, Move, Result, Ruleset
from games.wire import (
    END_NOTICE_SCHEMA,
    INFO_REPLY_SCHEMA,
    MOVE_REPLY_SCHEMA,
    MOVE_REQUEST_SCHEMA,
    PROTOCOL,
    SCHEMAS,
    START_NOTICE_SCHEMA,
    ProtocolError,
    WireHistory,
    WrongProtocolError,
    anonymous_seat_names,
    check,
    end_notice,
    game_block,
    info_reply,
    move_request,
    parse_info_reply,
    parse_move_reply,
    parse_move_request,
    start_notice,
    wire_lucky_deal,
    wire_play,
)

GOLDEN = Path(__file__).parent / "golden"
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schemas"

# (golden file, preset options, seed, plays made before the request, latency_ms)
SCENARIOS = [
    ("move_request_2p_first_move.json", {}, 7, 0, None),
    ("move_request_4p_teams_mid_round.json", {"players": 4, "teams": True}, 11, 5, 12.5),
    # Seed 10 opens with a table of 1c 2e 3e 9o, worth 15: the dealer (seat 0) takes it.
    ("move_request_2p_lucky_deal.json", {}, 10, 2, 3.0),
]


def game_after(options: dict, seed: int, plays: int) -> Game:
    game = Game.new(Ruleset.from_preset("classic", options), seed=seed)
    for _ in range(plays):
        game.apply(game.legal_moves()[0])
    return game


def request_for(options: dict, seed: int, plays: int, latency_ms: float | None) -> dict:
    game = game_after(options, seed, plays)
    players = game.ruleset.players
    return move_request(
        game.view(game.current_seat),
        game_id=41,
        timeout_ms=1000,
        seat_names=[f"bot{seat}" for seat in range(players)],
        latency_ms=latency_ms,
        time_bank_ms=1000,
    )


@pytest.mark.parametrize("name, options, seed, plays, latency", SCENARIOS)
def test_move_request_matches_golden_file(name, options, seed, plays, latency):
    body = request_for(options, seed, plays, latency)
    assert body == json.loads((GOLDEN / name).read_text())


@pytest.mark.parametrize("name", [scenario[0] for scenario in SCENARIOS])
def test_golden_requests_follow_the_schema(name):
    body = json.loads((GOLDEN / name).read_text())
    jsonschema.Draft202012Validator(MOVE_REQUEST_SCHEMA).validate(body)
    check(body, MOVE_REQUEST_SCHEMA)


def test_move_request_shows_only_the_seats_own_hand():
    game = game_after({"players": 4, "teams": True}, 3, 2)
    seat = game.current_seat
    text = orjson.dumps(
        move_request(
            game.view(seat),
            game_id=1,
            timeout_ms=500,
            seat_names=["a"] * 4,
            latency_ms=None,
            time_bank_ms=500,
        )
    ).decode()
    hidden = {str(card) for other in range(4) if other != seat for card in game.hand(other)}
    assert hidden
    for card in hidden:
        assert f'"{card}"' not in text


def test_move_request_round_trips_through_the_parser():
    game = game_after({"players": 4, "teams": True}, 11, 5)
    view = game.view(game.current_seat)
    body = request_for({"players": 4, "teams": True}, 11, 5, 12.5)
    parsed = parse_move_request(body)
    assert parsed.seat == view.seat and parsed.team == view.team
    assert list(parsed.hand) == view.hand
    assert list(parsed.table) == view.table
    assert list(parsed.legal_moves) == view.legal_moves
    assert list(parsed.history) == view.history
    assert parsed.latency_ms == 12.5
    assert [seat.name for seat in parsed.seats] == ["bot0", "bot1", "bot2", "bot3"]


def test_the_lucky_deal_is_in_the_request_and_its_cards_are_seen():
    body = request_for({}, 10, 2, None)
    assert body["lucky_deal"] == {"seat": 0, "cards": ["1c", "2e", "3e", "9o"], "escobas": 1}
    assert all(card not in body["table"] for card in body["lucky_deal"]["cards"])
    parsed = parse_move_request(body)
    assert parsed.lucky_deal.seat == 0 and parsed.lucky_deal.escobas == 1
    assert [str(card) for card in parsed.lucky_deal.cards] == ["1c", "2e", "3e", "9o"]
    # Without a lucky deal the field is null; a request without it at all still parses.
    assert request_for({}, 7, 0, None)["lucky_deal"] is None
    plain = request_for({}, 7, 0, None)
    del plain["lucky_deal"]
    assert parse_move_request(plain).lucky_deal is None
    with pytest.raises(ProtocolError, match=r"lucky_deal.cards\[0\]"):
        parse_move_request({**body, "lucky_deal": {"seat": 0, "cards": ["0o"], "escobas": 1}})


def round_lucky_deal(game: Game) -> dict | None:
    """The lucky deal of the round being played, in wire form, from the view of the seat to
    play (the view carries it)."""
    return wire_lucky_deal(game.view(game.current_seat).lucky_deal)


def test_round_lucky_deal_follows_the_round():
    game = game_after({}, 10, 0)
    assert round_lucky_deal(game)["cards"] == ["1c", "2e", "3e", "9o"]
    while game.round == 1:
        game.apply(game.legal_moves()[0])
    assert round_lucky_deal(game) == game.log()["rounds"][-1]["lucky_deal"]


@pytest.mark.parametrize("options", [{}, {"players": 4, "teams": True}])
def test_wire_history_gives_the_same_bodies_as_encoding_every_move(options):
    """Through whole games, rounds and lucky deals included, the referee's incremental history
    and once-made game block give byte for byte the body that encoding everything on every move
    gives, and the legal moves (their wire form made once per move) are each move's own."""
    for seed in (3, 10):
        game = Game.new(Ruleset.from_preset("classic", options), seed=seed)
        history = WireHistory()
        block = game_block(game.ruleset, seed, 1000)
        names = [f"bot{seat}" for seat in range(game.ruleset.players)]
        moves = rounds = 0
        while not game.is_over:
            view = game.view(game.current_seat)
            ids = {
                "game_id": seed,
                "timeout_ms": 1000,
                "seat_names": names,
                "latency_ms": 1.5,
                "time_bank_ms": 1000,
            }
            incremental = move_request(view, history=history.of(view), game=block, **ids)
            assert orjson.dumps(incremental) == orjson.dumps(move_request(view, **ids))
            assert incremental["history"] == [wire_play(play) for play in view.history]
            assert incremental["legal_moves"] == [move.to_wire() for move in view.legal_moves]
            rounds += not view.history
            moves += 1
            game.apply(game.legal_moves()[moves % len(game.legal_moves())])
        assert rounds > 1 and moves > 50


def test_wire_history_starts_again_for_a_new_round_or_a_shorter_history():
    first = game_after({}, 7, 3)
    history = WireHistory()
    assert len(history.of(first.view(first.current_seat))) == 3
    fresh = game_after({}, 8, 1)  # same round number, shorter history: another game
    assert history.of(fresh.view(fresh.current_seat)) == [
        wire_play(play) for play in fresh.view(fresh.current_seat).history
    ]


def test_round_lucky_deal_without_the_log_agrees_with_the_log():
    for seed in range(40):
        game = game_after({}, seed, 0)
        while not game.is_over:
            assert round_lucky_deal(game) == game.log()["rounds"][-1]["lucky_deal"]
            for _ in range(7):
                if not game.is_over:
                    game.apply(game.legal_moves()[-1])


def test_parse_move_request_names_the_bad_field():
    body = request_for({}, 7, 0, None)
    body["you"]["hand"][0] = "11o"
    with pytest.raises(ProtocolError, match=r"you.hand\[0\]"):
        parse_move_request(body)
    with pytest.raises(WrongProtocolError):
        parse_move_request({**body, "protocol": "escoba/2"})


@pytest.mark.parametrize(
    "reply, move",
    [
        ({"card": "7o", "capture": ["3c", "5e"]}, "7o:3c+5e"),
        ({"card": "7o", "capture": ["5e", "3c"]}, "7o:3c+5e"),
        ({"card": "4b", "capture": []}, "4b"),
        ({"card": "4b"}, "4b"),
        ({"card": "4b", "capture": None}, "4b"),
        ({"card": "4b", "capture": [], "comment": "extra fields are ignored"}, "4b"),
    ],
)
def test_parse_move_reply_accepts(reply, move):
    assert parse_move_reply(reply) == Move.from_str(move)


@pytest.mark.parametrize(
    "reply, reason",
    [
        ([], "expected object"),
        ("7o", "expected object"),
        (None, "expected object"),
        ({}, "missing 'card'"),
        ({"card": 7}, "card: expected string"),
        ({"card": "8x"}, "card: '8x' is not allowed"),
        ({"card": "11o"}, "is not allowed"),
        ({"card": "7o", "capture": "3c"}, "capture: expected array"),
        ({"card": "7o", "capture": ["3c", True]}, r"capture\[1\]: expected string"),
        ({"card": "7o", "capture": ["3c", "3c"]}, "listed twice"),
        ({"card": "7o", "capture": ["1o"] * 41}, "more than 40 items"),
    ],
)
def test_parse_move_reply_refuses(reply, reason):
    with pytest.raises(ProtocolError, match=reason):
        parse_move_reply(reply)


def test_parse_info_reply():
    info = parse_info_reply(info_reply("greedy", "ana", "1.2"))
    assert (info.name, info.author, info.version) == ("greedy", "ana", "1.2")
    with pytest.raises(WrongProtocolError, match="escoba/0"):
        parse_info_reply({**info_reply("a", "b", "c"), "protocol": "escoba/0"})
    with pytest.raises(WrongProtocolError):
        parse_info_reply({"name": "a", "author": "b", "version": "c"})
    with pytest.raises(ProtocolError, match="missing 'author'"):
        parse_info_reply({"protocol": PROTOCOL, "name": "a", "version": "c"})
    with pytest.raises(ProtocolError, match="longer than"):
        parse_info_reply(info_reply("x" * 201, "b", "c"))


def test_no_body_names_the_set_of_its_game():
    """`game.match_id` is the game's own id in every body: two games of one duplicate set cannot
    be told to belong together (the field stays for escoba/1 bots that read it)."""
    ruleset = Ruleset.from_preset("classic", {})
    game = Game.new(ruleset, seed=3)
    for game_id in (41, 42):
        body = move_request(game.view(game.current_seat), game_id=game_id, timeout_ms=100,
                            seat_names=["a", "b"], latency_ms=None, time_bank_ms=100)  # fmt: skip
        start = start_notice(ruleset=ruleset, game_id=game_id, timeout_ms=100, seat=0,
                             seat_names=["a", "b"])  # fmt: skip
        assert body["game"]["match_id"] == start["game"]["match_id"] == str(game_id)
        assert parse_move_request(body).match_id == str(game_id)


def test_anonymous_seat_names_tell_no_game_from_another():
    assert anonymous_seat_names(4) == ["seat 0", "seat 1", "seat 2", "seat 3"]


def test_notices_follow_their_schemas():
    ruleset = Ruleset.from_preset("classic", {"players": 4, "teams": True})
    names = ["a", "b", "c", "d"]
    start = start_notice(ruleset=ruleset, game_id=1, timeout_ms=100, seat=2, seat_names=names)
    result = Result(winner=1, totals=[12, 21], reason="target")
    end = end_notice(
        ruleset=ruleset,
        game_id=1,
        timeout_ms=100,
        seat=2,
        seat_names=names,
        result=result,
        log_url="https://example.org/games/1/log",
    )
    assert start["you"] == {"seat": 2, "team": 0}
    assert [seat["team"] for seat in start["seats"]] == [0, 1, 0, 1]
    assert end["result"] == {"winner": 1, "totals": [12, 21], "reason": "target"}
    for body, schema in ((start, START_NOTICE_SCHEMA), (end, END_NOTICE_SCHEMA)):
        jsonschema.Draft202012Validator(schema).validate(body)
        check(body, schema)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schemas_are_valid_and_published(name):
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[name])
    assert json.loads((SCHEMA_DIR / f"{name}.json").read_text()) == SCHEMAS[name]


@pytest.mark.parametrize(
    "value, schema",
    [
        ({"card": "7o", "capture": ["3c"]}, MOVE_REPLY_SCHEMA),
        ({"card": "7o", "capture": [1]}, MOVE_REPLY_SCHEMA),
        ({"card": True}, MOVE_REPLY_SCHEMA),
        ({"protocol": PROTOCOL, "name": "a", "author": "b", "version": 1}, INFO_REPLY_SCHEMA),
        ({"protocol": "escoba/9", "name": "a", "author": "b", "version": "1"}, INFO_REPLY_SCHEMA),
        ({"protocol": PROTOCOL, "name": "a", "author": "b", "version": "1"}, INFO_REPLY_SCHEMA),
    ],
)
def test_our_validator_agrees_with_jsonschema(value, schema):
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    try:
        check(value, schema)
    except ProtocolError:
        assert not expected
    else:
        assert expected
