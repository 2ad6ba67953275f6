"""`replay`: ask a bot again for one recorded decision and judge its answer as the referee would.

The file is the exact body the arena sent with `POST U/move` (the `escoba/1` move request), as
the owner downloads it from a replay, or a play of `GET /api/games/{id}/diagnostics/` that
carries that body in its `request` field. The body is checked by the wire format
(`games.wire.parse_move_request`); the answer is judged by the engine itself: the position is
rebuilt from what the request says (`games.engine.determinize`: the hidden cards do not change
whether a move is legal), the move is applied to it, and the engine's own error says why an
illegal move is illegal.

The bot is either a `module:function` run in this process or a URL called over HTTP (signed with
the bot's secret when one is given), with the request's own `timeout_ms` as the deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games.engine import EscobaError, Game, IllegalMoveError, Move, determinize
from games.protocol_check import MAX_REPLY_BYTES, Answer, Call
from games.wire import ProtocolError, parse_move_reply

from .bot import Bot, BotError, Choose, as_bot, to_move
from .http_transport import HttpTransport
from .state import BotState

# What the exit status of `python -m bots_sdk replay` means.
EXIT_LEGAL = 0  # a legal move within the request's time limit
EXIT_WRONG = 1  # the answer is illegal, unusable or late, or the bot failed
EXIT_CANNOT_RUN = 2  # the request file or the bot could not be used at all

ERROR_NO_FILE = "cannot read {path}: {reason}"
ERROR_NOT_JSON = "{path} is not JSON: {reason}"
ERROR_NOT_A_REQUEST = (
    "{path} is not an escoba/1 move request ({reason}); give the body of POST U/move as the "
    "arena sent it, or a diagnostics play with a `request` field"
)
NOTE_DISAGREES = (
    "the request's legal_moves are not the engine's for this hand and table (was the file "
    "edited?); the engine judges"
)
NOTE_NO_POSITION = (
    "the engine cannot rebuild this position ({reason}); the move is judged against the "
    "request's legal_moves"
)
ERROR_UNREACHABLE = "cannot reach the bot at {url}: {reason} (is it running, on that address?)"


class ReplayError(Exception):
    """The replay could not be run: a bad request file or a bot that cannot be reached."""


def load_request(path: str | Path) -> dict[str, Any]:
    """The move request in `path`, checked by the wire format; `ReplayError` says what is wrong.

    Accepts the request body itself, or an object with the body in `request` (a play of the
    diagnostics endpoint, or anything that wraps the body that way).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ReplayError(ERROR_NO_FILE.format(path=path, reason=reason.lower())) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReplayError(ERROR_NOT_JSON.format(path=path, reason=exc)) from None
    return request_from(data, source=str(path))


def request_from(data: Any, *, source: str = "the request") -> dict[str, Any]:
    """The move request body in `data` (itself, or its `request` field), checked."""
    if isinstance(data, Mapping) and "protocol" not in data and "request" in data:
        data = data["request"]
    try:
        BotState.from_request(data)
    except ProtocolError as exc:
        raise ReplayError(ERROR_NOT_A_REQUEST.format(path=source, reason=exc)) from None
    return dict(data)


def position_of(body: Mapping[str, Any]) -> tuple[Game | None, str | None]:
    """A full game state that agrees with the request, or None and why there is none.

    A request the arena sent always has one; a hand-written one may not (say, capture counts
    that do not add up with the plays), and is then judged by its own `legal_moves` only.
    """
    state = BotState.from_request(body)
    try:
        game = determinize(state, seed=0)
    except EscobaError as exc:
        return None, NOTE_NO_POSITION.format(reason=exc)
    if tuple(game.legal_moves()) != state.legal_moves:
        return game, NOTE_DISAGREES
    return game, None


@dataclass
class Replay:
    """What the bot answered to the request, and the referee's judgement of it."""

    game_id: str
    seat: int
    timeout_ms: int
    elapsed_ms: float | None = None
    reply: Any = None
    move: Move | None = None
    legal: bool = False
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    legal_moves: tuple[Move, ...] = ()

    @property
    def late(self) -> bool:
        return self.elapsed_ms is not None and self.elapsed_ms > self.timeout_ms

    @property
    def ok(self) -> bool:
        return self.legal and not self.late and not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seat": self.seat,
            "ok": self.ok,
            "reply": self.reply,
            "move": None if self.move is None else self.move.to_str(),
            "legal": self.legal,
            "elapsed_ms": None if self.elapsed_ms is None else round(self.elapsed_ms, 3),
            "timeout_ms": self.timeout_ms,
            "late": self.late,
            "problems": list(self.problems),
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        lines = [f"game {self.game_id}, seat {self.seat}"]
        if self.reply is not None:
            lines.append(f"  answer   {json.dumps(self.reply, ensure_ascii=False)}")
        if self.move is not None:
            verdict = "legal" if self.legal else "ILLEGAL"
            lines.append(f"  move     {self.move.to_str()} ({verdict})")
        if self.elapsed_ms is not None:
            limit = f"limit {self.timeout_ms} ms"
            late = f", OVER the {limit}" if self.late else f", {limit}"
            lines.append(f"  time     {self.elapsed_ms:.2f} ms{late}")
        lines.extend(f"  problem  {problem}" for problem in self.problems)
        lines.extend(f"  note     {note}" for note in self.notes)
        lines.append(f"result: {'OK' if self.ok else 'FAIL'}")
        return "\n".join(lines) + "\n"


def _judge(replay: Replay, game: Game | None, move: Move) -> None:
    """The engine decides: apply the move to a position that agrees with the request."""
    replay.move = move
    if game is None:
        replay.legal = move in replay.legal_moves
        if not replay.legal:
            replay.problems.append(f"illegal move {move.to_str()}: not in the legal_moves")
        return
    try:
        game.apply(move)
    except IllegalMoveError as exc:
        replay.problems.append(f"illegal move {move.to_str()}: {exc}")
        return
    replay.legal = True


def _start(body: Mapping[str, Any]) -> tuple[Replay, Game | None]:
    game, note = position_of(body)
    replay = Replay(
        game_id=str(body["game"]["id"]),
        seat=int(body["you"]["seat"]),
        timeout_ms=int(body["game"]["timeout_ms"]),
        legal_moves=BotState.from_request(body).legal_moves,
    )
    if note is not None:
        replay.notes.append(note)
    return replay, game


def replay_local(body: Mapping[str, Any], target: Bot | Choose) -> Replay:
    """Ask `target` (a `choose` function or a `Bot`) in this process, and judge its answer."""
    replay, game = _start(body)
    player = as_bot(target)
    state = BotState.from_request(body)
    started = time.perf_counter()
    try:
        answer = player.choose(state)
    except Exception as exc:
        replay.elapsed_ms = (time.perf_counter() - started) * 1000
        replay.problems.append(f"choose raised {type(exc).__name__}: {exc}")
        return replay
    replay.elapsed_ms = (time.perf_counter() - started) * 1000
    replay.reply = answer.to_wire() if isinstance(answer, Move) else answer
    try:
        move = to_move(answer)
    except BotError as exc:
        replay.problems.append(str(exc))
        return replay
    _judge(replay, game, move)
    return replay


def replay_http(
    body: Mapping[str, Any], url: str, *, secret: str | None = None, timeout_ms: int | None = None
) -> Replay:
    """`POST url/move` with the request (signed when `secret` is given) and judge the reply.

    The deadline is `timeout_ms`, by default the request's own. `ReplayError` when the bot
    cannot be reached at all; everything the bot does wrong is in the `Replay`.
    """
    replay, game = _start(body)
    deadline_ms = timeout_ms or replay.timeout_ms
    try:
        transport = HttpTransport(url, secret, deadline_ms)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    try:
        answer = transport.send(Call("POST", "move", dict(body)))
    finally:
        transport.close()
    _judge_answer(replay, game, answer, url, signed=secret is not None)
    return replay


def _judge_answer(
    replay: Replay, game: Game | None, answer: Answer, url: str, *, signed: bool
) -> None:
    if answer.timed_out:
        replay.problems.append(answer.error or "no answer in time")
        return
    if answer.error is not None:
        reason = _unreachable_reason(answer.error_type, answer.error)
        raise ReplayError(ERROR_UNREACHABLE.format(url=url, reason=reason))
    replay.elapsed_ms = answer.latency_ms
    if answer.status != 200:
        text = answer.payload[:200].decode("utf-8", "replace").strip() or "(empty body)"
        hint = ""
        if answer.status == 401:
            hint = (
                " (the bot checks signatures: give its secret with --secret or $ESCOBA_BOT_SECRET)"
                if not signed
                else " (the bot refused the signature: is this the secret it has now?)"
            )
        replay.problems.append(f"the bot answered HTTP {answer.status}: {text}{hint}")
        return
    if len(answer.payload) > MAX_REPLY_BYTES:
        replay.problems.append(f"the reply is over {MAX_REPLY_BYTES} bytes")
        return
    try:
        replay.reply = json.loads(answer.payload)
    except ValueError:
        replay.problems.append("the reply is not JSON")
        return
    try:
        move = parse_move_reply(replay.reply)
    except ProtocolError as exc:
        replay.problems.append(f"the reply is not a move: {exc}")
        return
    _judge(replay, game, move)


def _unreachable_reason(error_type: str, error: str) -> str:
    reasons = {
        "ConnectionRefusedError": "nothing is listening there (connection refused)",
        "gaierror": "the host name does not resolve",
        "ConnectionResetError": "the connection was reset",
        "RemoteDisconnected": "the bot closed the connection without answering",
        "SSLError": "the TLS handshake failed",
        "SSLCertVerificationError": "the TLS certificate is not valid for this host",
    }
    return reasons.get(error_type, f"the connection failed ({error_type or error})")
