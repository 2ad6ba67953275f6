"""The protocol check: scripted positions played against a live bot, and how each answer is judged.

Written once, without any I/O, and run by two transports: the arena's hardened async caller
(`tournaments.bot_calls`, for `POST /api/bots/{id}/check/` and the periodic checks) and the SDK's
standard-library client (`python -m bots_sdk check`). `steps` yields each request to send
(`Call`), receives what came back (`Answer`) and writes its judgement into a `CheckReport`;
`run` and `run_async` drive it with a blocking or an awaitable `send`.

Each position is a real game (`Game.new` from a pinned seed, then pinned moves), so the request
bodies are exactly what the arena would send (`move_request`) and the bot's answer is judged by
the engine itself.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Awaitable, Callable, Generator
from dataclasses import asdict, dataclass, field
from typing import Any

from .engine import DEFAULT_PRESET, EscobaError, Game, Move, Result, Ruleset
from .faults import DEFAULT_TIMEOUT_MS
from .wire import ProtocolError, end_notice, move_request, parse_info_reply, parse_move_reply
from .wire import start_notice as start_notice_body

MAX_REPLY_BYTES = 64 * 1024
RULESET = Ruleset.from_preset(DEFAULT_PRESET)
SEAT_NAMES = ("you", "check")
PASS, FAIL, WARN = "pass", "fail", "warn"
# What a forged request carries instead of the real signature.
FORGED_SIGNATURE = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


@dataclass(frozen=True)
class Position:
    """A position reached by playing `moves` (space-separated) from `Game.new(RULESET, seed)`."""

    name: str
    why: str
    seed: int
    moves: str | tuple[str, ...]
    holds: Callable[[Game], bool] = field(repr=False, compare=False)

    def game(self) -> Game:
        game = Game.new(RULESET, seed=self.seed)
        moves = self.moves.split() if isinstance(self.moves, str) else self.moves
        for text in moves:
            game.apply(Move.from_str(text))
        return game


def _table(game: Game) -> list:
    return game.view(game.current_seat).table


def is_forced_capture(game: Game) -> bool:
    moves = game.legal_moves()
    return bool(moves) and all(move.capture for move in moves)


def has_several_ways(game: Game) -> bool:
    ways: dict[Any, int] = {}
    for move in game.legal_moves():
        if move.capture:
            ways[move.card] = ways.get(move.card, 0) + 1
    return any(count >= 3 for count in ways.values())


def has_sweep(game: Game) -> bool:
    table = _table(game)
    return len(table) >= 3 and any(len(m.capture) == len(table) for m in game.legal_moves())


def has_empty_table(game: Game) -> bool:
    view = game.view(game.current_seat)
    return not view.table and len(view.hand) >= 2


def is_last_play(game: Game) -> bool:
    view = game.view(game.current_seat)
    in_hands = sum(seat.hand_size for seat in view.seats)
    return view.deck_remaining == 0 and in_hands == 1 and bool(view.table)


# Found by random play-outs of round 1 (seeds 1 and 2); `tests/sdk/test_sdk_check.py` replays
# them and fails if an engine change makes one of them stop being what its name says.
_ROUND_1_OF_SEED_1 = tuple(
    "3c:2b+10o 6b:9b 4b 4e 5b 4o 10e:5b 6o:1e+4e+4b 5c 1c 3e 8e:3e+4o 8o 2o:5c+8o 9e 1b 8b 10b "
    "10c 8c 1o 5o:10c 3o:1o+1c+1b+9e 7o:8b 3b 6e 5e:10b 7e:8c 7c 9c:6e 6c 9o:6c 2e 2c 7b".split()
)
POSITIONS: tuple[Position, ...] = (
    Position(
        "forced capture", "every card in hand captures, a trail is illegal",
        seed=1, moves="", holds=is_forced_capture,
    ),
    Position(
        "several ways to make 15", "one card makes 15 in three or more ways",
        seed=1, moves="3c:2b+10o 6b:9b 4b 4e 5b 4o", holds=has_several_ways,
    ),
    Position(
        "sweep", "a capture can take the whole table",
        seed=1, moves=_ROUND_1_OF_SEED_1[:13], holds=has_sweep,
    ),
    Position(
        "empty table", "nothing to capture, every move is a trail",
        seed=2, moves="1o:5b+9c 7c:2b+6c", holds=has_empty_table,
    ),
    Position(
        "last play of the round", "one card left in all hands, the deck is empty",
        seed=1, moves=_ROUND_1_OF_SEED_1[:35], holds=is_last_play,
    ),
)  # fmt: skip
# Every request a check may send: info, the positions, two notices, the forged signature.
MAX_CALLS = len(POSITIONS) + 4


# --- the report --------------------------------------------------------------------------------


@dataclass
class CheckResult:
    """One line of the report: `status` is pass, fail or warn (warnings do not fail a bot)."""

    name: str
    status: str
    detail: str
    latency_ms: float | None = None


@dataclass
class CheckReport:
    url: str
    results: list[CheckResult] = field(default_factory=list)
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.status != FAIL for r in self.results)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == FAIL]

    def add(self, name: str, status: str, detail: str, latency_ms: float | None = None) -> None:
        latency = None if latency_ms is None else round(latency_ms, 3)
        self.results.append(CheckResult(name, status, detail, latency))

    def move_latencies(self) -> list[float]:
        return [
            r.latency_ms
            for r in self.results
            if r.name.startswith("move:") and r.latency_ms is not None
        ]

    def to_dict(self) -> dict[str, Any]:
        latencies = self.move_latencies()
        return {
            "url": self.url,
            "ok": self.ok,
            "timeout_ms": self.timeout_ms,
            "latency_ms": {
                "median": round(statistics.median(latencies), 3) if latencies else None,
                "max": round(max(latencies), 3) if latencies else None,
            },
            "results": [asdict(result) for result in self.results],
        }

    def to_text(self) -> str:
        width = max((len(r.name) for r in self.results), default=0)
        lines = [f"escoba/1 check of {self.url}"]
        for r in self.results:
            timing = f" ({r.latency_ms:.2f} ms)" if r.latency_ms is not None else ""
            lines.append(f"  {r.status.upper():4}  {r.name:{width}}  {r.detail}{timing}")
        latencies = self.move_latencies()
        if latencies:
            lines.append(
                f"moves: {len(latencies)}, median {statistics.median(latencies):.2f} ms, "
                f"max {max(latencies):.2f} ms (limit {self.timeout_ms} ms)"
            )
        failures = len(self.failures)
        verdict = "OK" if self.ok else f"FAIL ({failures} failure{'s' * (failures != 1)})"
        lines.append(f"result: {verdict}")
        return "\n".join(lines) + "\n"


# --- what a transport does -----------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request for the transport to send: `GET U` (route "") or `POST U/<route>`.

    A transport with the bot's secret signs every call; a `forged` one goes out with
    `FORGED_SIGNATURE` instead of the real signature.
    """

    method: str
    route: str
    body: dict[str, Any] | None = None
    forged: bool = False


@dataclass(frozen=True)
class Answer:
    """What came back: an HTTP status and the first `MAX_REPLY_BYTES + 1` bytes of the body, or,
    when no complete answer came, `error` ("ConnectionRefusedError: ..."), the short
    `error_type`, and `timed_out` when it was the request's deadline that passed."""

    status: int = 0
    payload: bytes = b""
    latency_ms: float | None = None
    error: str | None = None
    error_type: str = ""
    timed_out: bool = False


def too_slow(timeout_ms: int) -> str:
    """How every transport words a request that passed its deadline."""
    return f"no complete answer within {timeout_ms} ms"


# --- the check ---------------------------------------------------------------------------------

Steps = Generator[Call, Answer, None]
# Said of every 401 a check without the bot's secret gets (the SDK's `check` without --secret).
UNSIGNED_HINT = " (the bot checks signatures: give its secret with --secret)"


def steps(report: CheckReport, *, signed: bool) -> Steps:
    """The check as a conversation: yields each call, receives its answer, fills `report`.

    `signed` says whether the transport signs with the bot's secret; with it, a forged request
    is sent last, to see that the bot refuses it.
    """
    timeout_ms = report.timeout_ms
    if not _judge_info(report, (yield Call("GET", "")), signed):
        return
    for position in POSITIONS:
        game = position.game()
        answer = yield Call("POST", "move", _request_for(position, game, timeout_ms))
        _judge_move(report, position, game, answer, signed)
    for route, body in _notices(timeout_ms).items():
        _judge_notice(report, route, (yield Call("POST", route, body)))
    if signed:
        position = POSITIONS[0]
        body = _request_for(position, position.game(), timeout_ms)
        _judge_signature(report, (yield Call("POST", "move", body, forged=True)))


def run(report: CheckReport, send: Callable[[Call], Answer], *, signed: bool) -> CheckReport:
    """The check through a blocking transport."""
    conversation = steps(report, signed=signed)
    try:
        call = next(conversation)
        while True:
            call = conversation.send(send(call))
    except StopIteration:
        return report


async def run_async(
    report: CheckReport, send: Callable[[Call], Awaitable[Answer]], *, signed: bool
) -> CheckReport:
    """The check through an async transport; `report` holds every judgement made so far, so a
    caller that gives up at an overall deadline still has them."""
    conversation = steps(report, signed=signed)
    try:
        call = next(conversation)
        while True:
            call = conversation.send(await send(call))
    except StopIteration:
        return report


def _decode(payload: bytes) -> Any:
    if len(payload) > MAX_REPLY_BYTES:
        raise ProtocolError(f"reply over {MAX_REPLY_BYTES} bytes")
    try:
        return json.loads(payload)
    except ValueError as exc:
        raise ProtocolError(f"reply is not JSON: {exc}") from None


def _judge_info(report: CheckReport, answer: Answer, signed: bool) -> bool:
    """Whether the check goes on: only a bot that answered something is worth more calls."""
    if answer.timed_out:
        report.add("info", FAIL, answer.error or "")
        return False
    if answer.error is not None:
        report.add("info", FAIL, f"unreachable: {answer.error}")
        return False
    if answer.status != 200:
        hint = UNSIGNED_HINT if answer.status == 401 and not signed else ""
        report.add("info", FAIL, f"GET answered HTTP {answer.status}{hint}", answer.latency_ms)
        return True
    try:
        info = parse_info_reply(_decode(answer.payload))
    except ProtocolError as exc:
        report.add("info", FAIL, f"GET reply: {exc}", answer.latency_ms)
        return True
    author = info.author or "(no author)"
    report.add("info", PASS, f"{info.name} {info.version} by {author}", answer.latency_ms)
    return True


def _request_for(position: Position, game: Game, timeout_ms: int) -> dict[str, Any]:
    view = game.view(game.current_seat)
    names = list(SEAT_NAMES if view.seat == 0 else reversed(SEAT_NAMES))
    return move_request(
        view,
        game_id=f"check-{position.seed}",
        timeout_ms=timeout_ms,
        seat_names=names,
        latency_ms=None,
        time_bank_ms=timeout_ms,
    )


def _judge_move(
    report: CheckReport, position: Position, game: Game, answer: Answer, signed: bool
) -> None:
    name = f"move: {position.name}"
    elapsed = answer.latency_ms
    if answer.timed_out:
        report.add(name, FAIL, answer.error or "")
        return
    if answer.error is not None:
        report.add(name, FAIL, f"request failed: {answer.error}")
        return
    if answer.status != 200:
        hint = UNSIGNED_HINT if answer.status == 401 and not signed else ""
        report.add(name, FAIL, f"HTTP {answer.status}: {_snippet(answer.payload)}{hint}", elapsed)
        return
    try:
        move = parse_move_reply(_decode(answer.payload))
    except ProtocolError as exc:
        report.add(name, FAIL, f"bad reply: {exc}", elapsed)
        return
    try:
        game.apply(move)
    except EscobaError as exc:
        report.add(name, FAIL, f"illegal move {move.to_str()}: {exc}", elapsed)
        return
    if elapsed is not None and elapsed > report.timeout_ms:
        limit = report.timeout_ms
        report.add(name, FAIL, f"{move.to_str()} took over the {limit} ms limit", elapsed)
        return
    report.add(name, PASS, f"{move.to_str()} ({position.why})", elapsed)


def _notices(timeout_ms: int) -> dict[str, dict[str, Any]]:
    common = {
        "ruleset": RULESET,
        "game_id": "check-notice",
        "timeout_ms": timeout_ms,
        "seat": 0,
        "seat_names": list(SEAT_NAMES),
    }
    result = Result(winner=0, totals=[21, 14], reason="target")
    return {
        "start": start_notice_body(**common),
        "end": end_notice(**common, result=result, log_url=None),
    }


def _judge_notice(report: CheckReport, route: str, answer: Answer) -> None:
    """`/start` and `/end` replies are ignored by the arena; a failure here is only a warning."""
    name = f"notice: /{route}"
    if answer.error is not None:
        report.add(name, WARN, f"failed ({answer.error_type}); ignored")
    elif 200 <= answer.status < 300:
        report.add(name, PASS, f"HTTP {answer.status}", answer.latency_ms)
    else:
        report.add(name, WARN, f"HTTP {answer.status} (ignored by the arena)", answer.latency_ms)


def _judge_signature(report: CheckReport, answer: Answer) -> None:
    """With a secret, a forged request must be refused; a bot that accepts it gets a warning."""
    if answer.error is not None:
        report.add("signature", WARN, f"forged request failed ({answer.error_type})")
    elif answer.status == 401:
        report.add("signature", PASS, "a forged signature is refused with 401", answer.latency_ms)
    else:
        report.add(
            "signature",
            WARN,
            f"a forged signature got HTTP {answer.status}, expected 401: verify signatures",
            answer.latency_ms,
        )


def _snippet(payload: bytes) -> str:
    text = payload[:120].decode("utf-8", "replace").strip()
    return text or "(empty body)"
