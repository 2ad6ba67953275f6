"""A move reply's private `debug` text: its wire form, its 2 KB cut, and the SDK's typed reply."""

from __future__ import annotations

import pytest

from bots_sdk import Bot, BotError, Reply, serve_in_thread
from games.faults import FaultKind
from games.wire import (
    DEBUG_MAX_BYTES,
    MOVE_REPLY_SCHEMA,
    ProtocolError,
    check,
    move_reply_debug,
    parse_move_reply,
)
from tests.bots.calls import call, sample_request
from tests.fakebots.simple import SimpleBot


@pytest.mark.parametrize(
    "text, kept, truncated",
    [
        ("short", "short", False),
        ("a" * DEBUG_MAX_BYTES, "a" * DEBUG_MAX_BYTES, False),
        ("a" * (DEBUG_MAX_BYTES + 1), "a" * DEBUG_MAX_BYTES, True),
        # "ñ" is two bytes: a cut never splits a character
        ("a" + "ñ" * DEBUG_MAX_BYTES, "a" + "ñ" * (DEBUG_MAX_BYTES // 2 - 1), True),
        ("", "", False),
    ],
)
def test_debug_is_kept_up_to_2048_bytes_and_cut_on_a_character(text, kept, truncated):
    debug = move_reply_debug({"card": "7o", "debug": text})
    assert (debug.text, debug.truncated) == (kept, truncated)
    assert len(debug.text.encode()) <= DEBUG_MAX_BYTES


@pytest.mark.parametrize("reply", [{"card": "7o"}, {"card": "7o", "debug": None}, "7o", None])
def test_no_debug_text_is_none(reply):
    assert move_reply_debug(reply) is None


def test_debug_is_part_of_the_move_reply_schema():
    check({"card": "7o", "capture": [], "debug": "why"}, MOVE_REPLY_SCHEMA)
    assert parse_move_reply({"card": "7o", "debug": "x" * 10_000}).to_str() == "7o"
    with pytest.raises(ProtocolError, match="debug"):
        parse_move_reply({"card": "7o", "debug": 12})


def first_legal_with(debug):
    def choose(state):
        return Reply(state.legal_moves[0], debug=debug)

    return choose


def test_a_long_debug_costs_nothing_over_the_wire():
    server = serve_in_thread(first_legal_with("é" * 3000), name="talker")
    try:
        [reply], _ = call(server.url)
    finally:
        server.stop()
    assert reply.fault is None and reply.move is not None
    assert reply.debug.truncated and reply.debug.text == "é" * (DEBUG_MAX_BYTES // 2)


def test_a_reply_without_debug_has_none_and_the_sdk_refuses_a_non_string():
    server = serve_in_thread(first_legal_with(None), name="mute")
    server_bad = serve_in_thread(lambda state: state.legal_moves[0], name="plain")
    try:
        [quiet], _ = call(server.url)
        [plain], _ = call(server_bad.url)
    finally:
        server.stop()
        server_bad.stop()
    assert (quiet.fault, quiet.debug) == (None, None)
    assert (plain.fault, plain.debug) == (None, None)
    bot = Bot(choose=first_legal_with(12))
    with pytest.raises(BotError, match="debug must be a string"):
        bot.move(sample_request())


def test_sdk_reply_carries_debug_to_the_wire():
    body = sample_request()
    wire = Bot(choose=first_legal_with("kept the 7 of oros")).move(body)
    assert wire["debug"] == "kept the 7 of oros"
    assert parse_move_reply(wire) in {parse_move_reply(m) for m in body["legal_moves"]}
    assert "debug" not in Bot(choose=lambda state: state.legal_moves[0]).move(body)


def test_caller_reports_a_non_string_debug_as_bad_schema(servers):
    bot = SimpleBot(reply=lambda body: (200, b'{"card": "1o", "debug": ["not", "text"]}'))
    [reply], _ = call(f"http://127.0.0.1:{servers.start_app(bot.app())}/")
    assert reply.fault.kind == FaultKind.BAD_SCHEMA and "debug" in reply.fault.detail
    assert reply.debug is None
