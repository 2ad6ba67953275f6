"""`python -m bots_sdk replay`: one recorded request, asked again, judged by the engine."""

from __future__ import annotations

import json
import time

import pytest

from bots_sdk import serve_in_thread
from bots_sdk.__main__ import main
from bots_sdk.examples import greedy
from bots_sdk.replay import (
    EXIT_CANNOT_RUN,
    EXIT_LEGAL,
    EXIT_WRONG,
    NOTE_DISAGREES,
    ReplayError,
    load_request,
    replay_http,
    replay_local,
)
from games.engine import Game, Move, Ruleset
from games.wire import move_request

SECRET = "whsec_" + "cmVwbGF5LXRlc3Qtc2VjcmV0LXZhbHVl"


def recorded_request(*, plays: int = 7, timeout_ms: int = 1000) -> dict:
    """A body exactly as the arena sends it, from a real game after `plays` moves."""
    game = Game.new(Ruleset.from_preset("classic"), seed=3)
    for _ in range(plays):
        game.apply(game.legal_moves()[-1])
    view = game.view(game.current_seat)
    return move_request(
        view, game_id=77, timeout_ms=timeout_ms, seat_names=["ana", "bea"],
        latency_ms=12.5, time_bank_ms=timeout_ms,
    )  # fmt: skip


def not_in_hand(body: dict) -> str:
    hand = set(body["you"]["hand"]) | set(body["table"])
    return next(f"{rank}{suit}" for suit in "oceb" for rank in range(1, 11)
                if f"{rank}{suit}" not in hand)  # fmt: skip


@pytest.fixture
def request_file(tmp_path):
    body = recorded_request()
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    return path, body


def test_a_legal_answer_is_shown_with_its_time_and_exits_0(request_file, capsys):
    path, body = request_file

    status = main(["replay", str(path), "--bot", "bots_sdk.examples.greedy:choose"])

    out = capsys.readouterr().out
    expected = greedy.choose(__import__("bots_sdk").BotState.from_request(body))
    assert status == EXIT_LEGAL
    assert f"game 77, seat {body['you']['seat']}" in out
    assert f"move     {expected.to_str()} (legal)" in out
    assert "ms, limit 1000 ms" in out
    assert out.rstrip().endswith("result: OK")


def test_a_diagnostics_play_with_the_request_inside_is_accepted(tmp_path, capsys):
    body = recorded_request()
    path = tmp_path / "play.json"
    path.write_text(json.dumps({"seat": 0, "latency_ms": 3.1, "fault": None, "request": body}))

    status = main(["replay", str(path), "--bot", "bots_sdk.examples.random", "--json"])

    report = json.loads(capsys.readouterr().out)
    assert status == EXIT_LEGAL
    assert report["ok"] and report["legal"] and report["game_id"] == "77"
    assert Move.from_str(report["move"]).to_wire() in body["legal_moves"]


def test_an_illegal_answer_says_why_in_the_engine_s_words(request_file, tmp_path, monkeypatch):
    path, body = request_file
    card = not_in_hand(body)
    (tmp_path / "wrongbot.py").write_text(f"def choose(state):\n    return {card!r}\n")
    monkeypatch.chdir(tmp_path)

    result = replay_local(load_request(path), lambda state: card)
    status = main(["replay", str(path), "--bot", "wrongbot"])

    assert status == EXIT_WRONG
    assert not result.legal and not result.ok
    assert result.problems == [
        f"illegal move {card}: card_not_in_hand: {card} is not in seat {body['you']['seat']}'s hand"
    ]


def test_a_trail_when_a_capture_is_forced_is_illegal():
    game = Game.new(Ruleset.from_preset("classic"), seed=1)  # every card in hand captures
    body = move_request(game.view(game.current_seat), game_id=1, timeout_ms=1000,
                        seat_names=["a", "b"], latency_ms=None, time_bank_ms=1000)  # fmt: skip
    card = body["you"]["hand"][0]

    result = replay_local(body, lambda state: card)

    assert not result.legal
    assert result.problems[0].startswith(f"illegal move {card}: must_capture")


def test_a_bot_that_raises_or_answers_nonsense_fails(request_file):
    _, body = request_file

    def broken(state):
        raise KeyError("hand")

    raised = replay_local(body, broken)
    nonsense = replay_local(body, lambda state: 42)

    assert raised.problems == ["choose raised KeyError: 'hand'"] and not raised.ok
    assert "choose must return a Move" in nonsense.problems[0] and not nonsense.ok


def test_an_answer_over_the_request_s_time_limit_is_late():
    body = recorded_request(timeout_ms=20)

    def slow(state):
        time.sleep(0.05)
        return state.legal_moves[0]

    result = replay_local(body, slow)

    assert result.legal and result.late and not result.ok
    assert "OVER the limit 20 ms" in result.to_text()


def test_over_http_signed_with_the_secret(request_file, capsys):
    path, body = request_file
    with serve_in_thread(greedy.choose, secret=SECRET) as handle:
        signed = main(["replay", str(path), "--url", handle.url, "--secret", SECRET])
        signed_out = capsys.readouterr().out
        unsigned = replay_http(body, handle.url)

    assert signed == EXIT_LEGAL, signed_out
    assert "(legal)" in signed_out
    assert unsigned.problems[0].startswith("the bot answered HTTP 401")
    assert "give its secret with --secret" in unsigned.problems[0]


def test_the_secret_comes_from_the_environment_too(request_file, monkeypatch, capsys):
    path, _ = request_file
    monkeypatch.setenv("ESCOBA_BOT_SECRET", SECRET)
    with serve_in_thread(greedy.choose, secret=SECRET) as handle:
        status = main(["replay", str(path), "--url", handle.url])
    assert status == EXIT_LEGAL, capsys.readouterr()


def test_an_unreachable_bot_is_said_plainly(request_file, capsys):
    path, _ = request_file
    with serve_in_thread(greedy.choose) as handle:
        url = handle.url  # a port that was free a moment ago and is closed now

    status = main(["replay", str(path), "--url", url])

    err = capsys.readouterr().err
    assert status == EXIT_CANNOT_RUN
    assert err == (
        f"replay: cannot reach the bot at {url}: nothing is listening there "
        "(connection refused) (is it running, on that address?)\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: no such file or directory"),
        ("{not json", "{path} is not JSON: "),
        ('{"protocol": "escoba/1"}', "{path} is not an escoba/1 move request (body: missing"),
        ('{"protocol": "escoba/2"}', "{path} is not an escoba/1 move request (protocol: expected"),
        ("[1, 2]", "{path} is not an escoba/1 move request (body: expected object"),
    ],
)
def test_bad_request_files_are_refused_in_our_words(tmp_path, capsys, content, message):
    path = tmp_path / "request.json"
    if content is not None:
        path.write_text(content)

    status = main(["replay", str(path), "--bot", "bots_sdk.examples.greedy"])

    err = capsys.readouterr().err
    assert status == EXIT_CANNOT_RUN
    assert err.startswith("replay: " + message.format(path=path)), err
    with pytest.raises(ReplayError):
        load_request(path)


def test_a_bot_that_cannot_be_imported_exits_2(request_file, capsys):
    path, _ = request_file
    status = main(["replay", str(path), "--bot", "no_such_module_here:choose"])
    assert status == EXIT_CANNOT_RUN
    assert "cannot import no_such_module_here" in capsys.readouterr().err


def test_edited_legal_moves_are_noted_and_the_engine_judges(request_file):
    _, body = request_file
    listed = body["legal_moves"][0]
    body["legal_moves"] = [listed, {"card": not_in_hand(body), "capture": []}]

    result = replay_local(body, lambda state: state.legal_moves[1])

    assert result.notes == [NOTE_DISAGREES]
    assert not result.legal and "card_not_in_hand" in result.problems[0]


def test_a_hand_written_request_is_judged_by_its_legal_moves(sample_request):
    """The sample's counts do not add up with its plays: no position, but the wire still checks
    that the move is one of the listed ones."""
    listed = replay_local(sample_request, lambda state: "10b:5e")
    unlisted = replay_local(sample_request, lambda state: "3c")

    assert listed.legal and listed.notes[0].startswith("the engine cannot rebuild this position")
    assert not unlisted.legal and unlisted.problems == ["illegal move 3c: not in the legal_moves"]
