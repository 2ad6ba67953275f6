"""The referee of a game between bots, written once and without any I/O.

The arena's runner (`tournaments.bot_calls.runner`, its hardened async HTTP caller), the SDK's
local league (`bots_sdk.league`, in-process or over HTTP) and `duel` (`bots_sdk.local`,
in-process) each bring their own transport and drive the same `Referee`:

    referee = Referee(game, seat_names=..., game_id=..., timeout_ms=..., anonymous=...)
    while not referee.is_over:
        turn = referee.turn()                    # the seat to move and its move request
        answer = <ask turn.seat with turn.request>   # an `Answer`: a move or a fault
        ruling = referee.judge(turn, answer)     # legality, lateness, the fault policy, applied

So a bad answer is judged the same way whoever carried it: the reply is parsed by
`body_outcome`/`reply_outcome` (`bad_json`, `bad_schema`), an HTTP answer by `http_answer`
(`timeout`, `connect`, `redirect`, `http_status`, `too_large`), lateness by `overtime` when the
transport could not cut the call at its deadline, legality by the engine (`illegal_move`: only
the engine's `IllegalMoveError`; any other error is ours and raises), and every fault by the
policy of `games.faults` (the fallback move, or a forfeit past `max_faults`). The request bodies
are the wire builders' (`games.wire.move_request`, `start_notice`, `end_notice`), never copied.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .engine import Game, GameView, IllegalMoveError, Move
from .faults import DEFAULT_MAX_FAULTS, Fault, FaultKind, fallback_move, forfeits
from .protocol_check import MAX_REPLY_BYTES, too_slow
from .protocol_check import Answer as HttpAnswer
from .wire import (
    Debug,
    ProtocolError,
    WireHistory,
    anonymous_seat_names,
    end_notice,
    game_block,
    move_reply_debug,
    move_request,
    parse_move_reply,
    start_notice,
)

Outcome = tuple[Move | None, Fault | None, Debug | None]


@dataclass(frozen=True)
class Turn:
    """The seat to move, where (1-based round and play of the round) and the request to send."""

    seat: int
    round: int
    play: int
    view: GameView
    request: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """What a transport brought back for one move request: a well-formed move (legality is the
    referee's to judge) or the fault that stands for it, the bot's latency, and the reply's
    private debug text when it had one.

    `deadline_kept` says the transport cut the call at its deadline itself (an HTTP caller
    does); when False (a bot called in-process cannot be interrupted) the referee judges the
    latency against the timeout.
    """

    move: Move | None = None
    fault: Fault | None = None
    latency_ms: float | None = None
    debug: Debug | None = None
    deadline_kept: bool = True


@dataclass(frozen=True)
class Ruling:
    """What the referee made of an answer: the play made for the seat (its own move, or the
    fallback move when `fault` is set; None when the seat forfeited and no play was made)."""

    turn: Turn
    move: Move | None
    fault: Fault | None
    latency_ms: float | None
    debug: Debug | None

    @property
    def forfeited(self) -> bool:
        return self.move is None


# --- judging a reply ------------------------------------------------------------------------------


def reply_outcome(data: Any) -> Outcome:
    """A move reply's decoded JSON: the move (not yet checked for legality) or the `bad_schema`
    fault, and its debug text, kept whatever became of the move."""
    debug = move_reply_debug(data)
    try:
        return parse_move_reply(data), None, debug
    except ProtocolError as error:
        return None, Fault(FaultKind.BAD_SCHEMA, str(error)), debug


def body_outcome(raw: bytes, loads: Callable[[bytes], Any] = json.loads) -> Outcome:
    """A move reply's body: `bad_json` when it does not decode (`loads` may be a faster decoder
    of the same JSON, raising `ValueError`), else `reply_outcome`."""
    try:
        data = loads(raw)
    except ValueError as error:
        return None, Fault(FaultKind.BAD_JSON, f"invalid JSON: {error}"), None
    return reply_outcome(data)


def http_answer(answer: HttpAnswer, timeout_ms: int) -> Answer:
    """A move call's HTTP answer as a `games.protocol_check` transport gives it (status and at most
    `MAX_REPLY_BYTES + 1` bytes, or the error that stopped it), judged as the arena's caller
    judges one."""
    latency = answer.latency_ms
    if answer.error is not None:
        if answer.timed_out:
            return Answer(fault=Fault(FaultKind.TIMEOUT, too_slow(timeout_ms)), latency_ms=latency)
        return Answer(fault=Fault(FaultKind.CONNECT, answer.error), latency_ms=latency)
    if 300 <= answer.status < 400:
        fault = Fault(FaultKind.REDIRECT, f"HTTP {answer.status}")
        return Answer(fault=fault, latency_ms=latency)
    if answer.status != 200:
        return Answer(
            fault=Fault(FaultKind.HTTP_STATUS, f"HTTP {answer.status}"), latency_ms=latency
        )
    if len(answer.payload) > MAX_REPLY_BYTES:
        fault = Fault(FaultKind.TOO_LARGE, f"more than {MAX_REPLY_BYTES} bytes")
        return Answer(fault=fault, latency_ms=latency)
    move, fault, debug = body_outcome(answer.payload)
    return Answer(move, fault, latency, debug)


def overtime(latency_ms: float | None, timeout_ms: int) -> Fault | None:
    """The `timeout` fault of an answer that came after its deadline, else None."""
    if latency_ms is not None and latency_ms > timeout_ms:
        return Fault(FaultKind.TIMEOUT, f"answered after {latency_ms:.0f} ms, over {timeout_ms} ms")
    return None


# --- the game -------------------------------------------------------------------------------------


class Referee:
    """One game between bots: the requests to send and the judgement of every answer.

    `faults[seat]` counts each seat's faults and `faulted` lists them in order as (seat,
    fault); the game (with its log and result) is `game`.
    """

    def __init__(
        self,
        game: Game,
        *,
        seat_names: Sequence[str],
        game_id: str | int,
        timeout_ms: int,
        max_faults: int = DEFAULT_MAX_FAULTS,
        anonymous: bool = False,
    ) -> None:
        if len(seat_names) != game.ruleset.players:
            raise ValueError(f"{game.ruleset.players} seats but {len(seat_names)} bots")
        self.game = game
        self.seat_names = list(seat_names)
        # What the bots are told of their table: in an anonymous (rated) game only `seat 0`,
        # `seat 1`..., the end notice included (the set's other games, with the same opponents,
        # may still be in play), so nobody can pick whom to dodge or feed.
        self.shown_names = anonymous_seat_names(len(seat_names)) if anonymous else self.seat_names
        self.max_faults = max_faults
        self.faults = [0] * len(seat_names)
        self.faulted: list[tuple[int, Fault]] = []
        self._ids = {"game_id": game_id, "timeout_ms": timeout_ms}
        self._latencies: list[float | None] = [None] * len(seat_names)
        self._history = WireHistory()
        self._game_block = game_block(game.ruleset, game_id, timeout_ms)

    @property
    def timeout_ms(self) -> int:
        return self._ids["timeout_ms"]

    @property
    def is_over(self) -> bool:
        return self.game.is_over

    def start_notices(self) -> list[dict[str, Any]]:
        """The `POST U/start` body of each seat, in seat order."""
        ruleset = self.game.ruleset
        return [
            start_notice(ruleset=ruleset, seat=seat, seat_names=self.shown_names, **self._ids)
            for seat in range(len(self.seat_names))
        ]

    def end_notices(self, log_url: str | None = None) -> list[dict[str, Any]]:
        """The `POST U/end` body of each seat, in seat order, once the game is over."""
        result = self.game.result
        if result is None:
            raise ValueError("the game is not over")
        return [
            end_notice(ruleset=self.game.ruleset, seat=seat, seat_names=self.shown_names,
                       result=result, log_url=log_url, **self._ids)
            for seat in range(len(self.seat_names))
        ]  # fmt: skip

    def turn(self) -> Turn:
        """The seat to move and its move request, carrying its own previous latency."""
        seat = self.game.current_seat
        if seat is None:
            raise ValueError("the game is over")
        view = self.game.view(seat)
        body = move_request(view, seat_names=self.shown_names, latency_ms=self._latencies[seat],
                            time_bank_ms=self.timeout_ms, history=self._history.of(view),
                            game=self._game_block, **self._ids)  # fmt: skip
        return Turn(seat, view.round, len(view.history) + 1, view, body)

    def judge(self, turn: Turn, answer: Answer) -> Ruling:
        """Judge the seat's answer to `turn` and play what the rules and the fault policy say."""
        seat = turn.seat
        self._latencies[seat] = answer.latency_ms
        fault = answer.fault
        move = answer.move
        if fault is None and not answer.deadline_kept:
            fault = overtime(answer.latency_ms, self.timeout_ms)
        if fault is None:
            if move is None:
                raise ValueError("an answer holds a move or a fault")
            try:
                self.game.apply(move)
            except IllegalMoveError as error:
                fault = Fault(FaultKind.ILLEGAL_MOVE, str(error))
        if fault is not None:
            self.faults[seat] += 1
            self.faulted.append((seat, fault))
            if forfeits(self.faults[seat], self.max_faults):
                move = None
                self.game.forfeit(seat, reason="faults")
            else:
                move = fallback_move(turn.view.legal_moves)
                self.game.apply(move)
        return Ruling(turn, move, fault, answer.latency_ms, answer.debug)
