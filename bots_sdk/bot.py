"""A bot is one function `choose(state) -> move`; `Bot` adds its name and the protocol glue.

`choose` may return an engine `Move` or its text form ("7o:3c+5e", "4b" for a trail), or a
`Reply` that adds a private `debug` text (seen only by the bot's owner, in the replay and the
diagnostics API). The answer is checked against the legal moves before it leaves, so an author
sees their mistake as a clear error here instead of a silent fault recorded by the referee.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from games.engine import EscobaError, Move
from games.wire import ProtocolError, info_reply

from .state import BotState


@dataclass(frozen=True)
class Reply:
    """A move with a private debug text: `Reply("7o:3c+5e", debug="took 3c+5e: worth 2")`.

    The arena keeps at most `DEBUG_MAX_BYTES` (2048) bytes of UTF-8 of `debug` and cuts the
    rest (the move still counts); only the bot's owner ever sees it.
    """

    move: Move | str
    debug: str | None = None


Choose = Callable[[BotState], Move | str | Reply]
Notify = Callable[[Mapping[str, Any]], None]


class BotError(RuntimeError):
    """`choose` failed or answered something unusable; the server turns it into a 500."""


@dataclass
class Bot:
    """A `choose` function plus what `GET /` tells the world about it.

    `on_start` and `on_end` receive the decoded `/start` and `/end` notifications; most bots
    leave them unset.
    """

    choose: Choose
    name: str = ""
    author: str = ""
    version: str = "1"
    on_start: Notify | None = None
    on_end: Notify | None = None

    def __post_init__(self) -> None:
        module = inspect.getmodule(self.choose)
        if not self.author:
            # The module's `__author__`, when it has one, is the bot's author.
            self.author = str(getattr(module, "__author__", ""))
        if self.name:
            return
        # `mybot:choose` is better known as "mybot"; a named function keeps its own name.
        name = getattr(self.choose, "__name__", "")
        if name in ("", "choose", "<lambda>"):
            name = module.__name__.rsplit(".", 1)[-1] if module else "bot"
        self.name = name

    def info(self) -> dict[str, str]:
        return info_reply(self.name, self.author, self.version)

    def move(self, body: Any, received_at: float | None = None) -> dict[str, Any]:
        """Answer a move request body (already JSON-decoded) with the wire reply;
        `received_at` (`time.perf_counter()`) is when the request arrived, if known.

        Raises `ProtocolError` for a body that breaks the protocol and `BotError` when `choose`
        raises or returns something that is not one of the legal moves.
        """
        state = BotState.from_request(body, received_at)
        if not state.legal_moves:
            raise ProtocolError("legal_moves: empty, there is nothing to choose from")
        move, debug = self.answer(state)
        if move not in state.legal_moves:
            raise BotError(f"choose returned {move.to_str()}, which is not a legal move")
        return wire_reply(move, debug)

    def answer(self, state: BotState) -> tuple[Move, str | None]:
        """What `choose` answers to `state`: the move and its debug text. Legality is not
        checked here: `move` checks it before a served bot answers; in-process, the referee
        judges it as it judges a served bot's reply.

        Raises `BotError` when `choose` raises or returns something that is not a move.
        """
        try:
            answer = self.choose(state)
        except Exception as exc:
            raise BotError(f"choose raised {type(exc).__name__}: {exc}") from exc
        debug = None
        if isinstance(answer, Reply):
            answer, debug = answer.move, answer.debug
            if debug is not None and not isinstance(debug, str):
                raise BotError(f"Reply.debug must be a string, got {type(debug).__name__}")
        return to_move(answer), debug

    def notify(self, kind: str, body: Any) -> None:
        """Pass a `/start` or `/end` notification to its hook; hook errors become `BotError`."""
        if not isinstance(body, Mapping):
            raise ProtocolError(f"body: expected an object, got {type(body).__name__}")
        hook = self.on_start if kind == "start" else self.on_end
        if hook is None:
            return
        try:
            hook(body)
        except Exception as exc:
            raise BotError(f"on_{kind} raised {type(exc).__name__}: {exc}") from exc


def wire_reply(move: Move, debug: str | None) -> dict[str, Any]:
    """The body of a move reply: the move, with its debug text when there is one."""
    wire = move.to_wire()
    if debug is not None:
        wire["debug"] = debug
    return wire


def to_move(answer: Any) -> Move:
    """Accept what `choose` may return: a `Move` or its text form."""
    if isinstance(answer, Move):
        return answer
    if isinstance(answer, str):
        try:
            return Move.from_str(answer)
        except EscobaError as exc:
            raise BotError(f"choose returned {answer!r}: {exc}") from None
    raise BotError(f"choose must return a Move or a string like '7o:3c+5e', got {answer!r}")


def as_bot(target: Bot | Choose, *, name: str | None = None) -> Bot:
    """Wrap a plain function; a `Bot` passes through (renamed when `name` is given)."""
    if isinstance(target, Bot):
        return replace(target, name=name) if name else target
    return Bot(choose=target, name=name or "")


def bot(*, name: str = "", author: str = "", version: str = "1") -> Callable[[Choose], Bot]:
    """Decorator form: `@bot(name="mine", author="me")` above `def choose(state): ...`."""

    def wrap(choose: Choose) -> Bot:
        return Bot(choose=choose, name=name, author=author, version=version)

    return wrap
