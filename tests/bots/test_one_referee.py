"""One referee (`games.referee`) for the arena's runner, the SDK's league and `duel`: one table of
bad answers, each played through every driver that can carry it, judged the same way (the same
fault kinds, in the same order, and the same game: fallback moves, forfeit, result)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from bots_sdk.league import HttpPlayer, LocalPlayer
from bots_sdk.league import play_game as league_game
from bots_sdk.local import referee_game
from bots_sdk.state import BotState
from games.engine import Game, Move, Ruleset
from games.protocol_check import Answer as HttpAnswer
from games.referee import Answer, Referee, body_outcome, http_answer, overtime
from tests.fakebots.simple import SimpleBot, not_in_hand
from tournaments.bot_calls.caller import Caller
from tournaments.bot_calls.runner import BotEndpoint, play_game

RULESET = Ruleset.from_preset("classic")
SEED = 11
TIMEOUT_MS = 200
SLOW_S = 0.45
MAX_FAULTS = 1  # the bad seat forfeits on its second move


def first_legal(body: dict[str, Any]) -> dict[str, Any]:
    return body["legal_moves"][0]


def answer_first(body: dict[str, Any]) -> tuple[int, bytes]:
    return 200, json.dumps(first_legal(body)).encode()


def choose_slowly(state: BotState) -> Move:
    time.sleep(SLOW_S)
    return state.legal_moves[0]


def choose_raising(state: BotState) -> Move:
    raise RuntimeError("boom")


@dataclass(frozen=True)
class Bad:
    name: str
    kind: str
    # The reply a bot over HTTP sends to a move request: (status, body).
    reply: Callable[[dict[str, Any]], tuple[int, bytes]]
    # What a bot called in-process answers instead, when the answer has an in-process form.
    choose: Callable[[BotState], Any] | None
    # How long the bot over HTTP waits before it replies.
    delay_s: float = 0.0


TABLE = [
    Bad(
        "a card not in hand",
        "illegal_move",
        lambda body: (200, json.dumps({"card": not_in_hand(body), "capture": []}).encode()),
        lambda state: Move.from_wire({"card": not_in_hand(dict(state.raw)), "capture": []}),
    ),
    Bad("not a card", "bad_schema", lambda body: (200, b'{"card": "zz", "capture": []}'), None),
    Bad("not JSON", "bad_json", lambda body: (200, b"{not json"), None),
    Bad("a server error", "http_status", lambda body: (500, b'{"error": "boom"}'), choose_raising),
    Bad("too slow", "timeout", answer_first, choose_slowly, delay_s=SLOW_S),
]


def outcome(kinds: list[str], result: Any) -> tuple:
    return kinds, result.winner, tuple(result.totals), result.reason


def through_the_runner(servers, bad: Bad) -> tuple:
    urls = [servers.start_app(SimpleBot(reply=bad.reply, delay=bad.delay_s).app()),
            servers.start_app(SimpleBot().app())]  # fmt: skip
    bots = [BotEndpoint(f"http://127.0.0.1:{port}/", name=f"b{i}") for i, port in enumerate(urls)]

    async def main():
        async with Caller(allow_private=True) as caller:
            return await play_game(ruleset=RULESET, seed=SEED, bots=bots, game_id="g",
                                   timeout_ms=TIMEOUT_MS, caller=caller,
                                   max_faults=MAX_FAULTS)  # fmt: skip

    record = asyncio.run(main())
    assert {fault["seat"] for fault in record.faults} == {0}
    result = record.log["result"]
    kinds = [fault["kind"] for fault in record.faults]
    return kinds, result["winner"], tuple(result["totals"]), result["reason"]


def through_the_league(players: list) -> tuple:
    played = league_game(players, (0, 1), ruleset=RULESET, seed=SEED, game_id="g",
                         timeout_ms=TIMEOUT_MS, max_faults=MAX_FAULTS)  # fmt: skip
    assert {seat for seat, _, _ in played.faulted} == {0}
    return outcome([kind for _, kind, _ in played.faulted], played.result)


def through_the_league_over_http(servers, bad: Bad) -> tuple:
    ports = [servers.start_app(SimpleBot(reply=bad.reply, delay=bad.delay_s).app()),
             servers.start_app(SimpleBot().app())]  # fmt: skip
    players = [HttpPlayer(f"http://127.0.0.1:{port}", secret=None, timeout_ms=TIMEOUT_MS)
               for port in ports]  # fmt: skip
    try:
        return through_the_league(players)
    finally:
        for player in players:
            player.close()


def through_duel(bad: Bad) -> tuple:
    referee = referee_game([bad.choose, first_legal_choice], seed=SEED, ruleset=RULESET,
                           timeout_ms=TIMEOUT_MS, max_faults=MAX_FAULTS)  # fmt: skip
    assert {seat for seat, _ in referee.faulted} == {0}
    return outcome([str(fault.kind) for _, fault in referee.faulted], referee.game.result)


@pytest.mark.parametrize("bad", TABLE, ids=[bad.name for bad in TABLE])
def test_every_driver_judges_a_bad_answer_the_same_way(servers, bad: Bad):
    outcomes = {
        "runner": through_the_runner(servers, bad),
        "league over HTTP": through_the_league_over_http(servers, bad),
    }
    if bad.choose is not None:
        players = [LocalPlayer(bad.choose, name="bad"), LocalPlayer(first_legal_choice, name="ok")]
        outcomes["league in-process"] = through_the_league(players)
        outcomes["duel"] = through_duel(bad)

    expected = outcomes["runner"]
    assert expected[0] == [bad.kind] * (MAX_FAULTS + 1)
    assert expected[1] == 1 and expected[3] == "forfeit"  # the bad seat forfeited
    for driver, seen in outcomes.items():
        assert seen == expected, driver


def first_legal_choice(state: BotState) -> Move:
    return state.legal_moves[0]


def test_a_late_answer_is_a_timeout_only_where_the_transport_kept_no_deadline():
    referee = Referee(
        Game.new(RULESET, seed=SEED),
        seat_names=["a", "b"],
        game_id="g",
        timeout_ms=100,
    )
    turn = referee.turn()
    own = turn.view.legal_moves[-1]
    # An HTTP caller cut the call at its deadline: the answer stands, whatever the latency says.
    kept = referee.judge(turn, Answer(own, latency_ms=100.4))
    assert kept.fault is None and kept.move == own

    turn = referee.turn()
    late = referee.judge(turn, Answer(turn.view.legal_moves[0], latency_ms=100.4,
                                      deadline_kept=False))  # fmt: skip
    assert late.fault is not None and str(late.fault.kind) == "timeout"
    assert overtime(100.0, 100) is None


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (
            HttpAnswer(error="TimeoutError: ...", error_type="TimeoutError", timed_out=True),
            "timeout",
        ),
        (HttpAnswer(error="ConnectionRefusedError: refused", error_type="x"), "connect"),
        (HttpAnswer(302, b""), "redirect"),
        (HttpAnswer(404, b"{}"), "http_status"),
        (HttpAnswer(200, b" " * (64 * 1024 + 1)), "too_large"),
        (HttpAnswer(200, b"[1"), "bad_json"),
        (HttpAnswer(200, b'{"card": 7, "capture": []}'), "bad_schema"),
    ],
)
def test_an_http_answer_is_judged_as_the_arenas_caller_judges_it(answer, kind):
    judged = http_answer(answer, TIMEOUT_MS)
    assert judged.move is None and str(judged.fault.kind) == kind


def test_a_reply_body_keeps_its_debug_text_whatever_became_of_its_move():
    move, fault, debug = body_outcome(b'{"card": "zz", "capture": [], "debug": "why"}')
    assert move is None and str(fault.kind) == "bad_schema" and debug.text == "why"
