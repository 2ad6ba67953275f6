"""Plays one game between bot endpoints over `escoba/1`: the caller carries each request and
`games.referee.Referee` judges each answer (legality, the fault policy of `games.faults`: a
faulting move is replaced by the fallback move, a seat that faults more than `max_faults` times
forfeits), as it does for the SDK's league and duel. Start and end notices are courtesy calls:
their failures are ignored and never count as faults.

Games are plain coroutines on a shared `Caller`, so a league worker can run dozens of them
concurrently in one event loop against slow bots.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from games.engine import Game, Move, Ruleset
from games.faults import DEFAULT_MAX_FAULTS, Fault
from games.referee import Referee
from games.wire import Debug

from .caller import Caller, run_sync


@dataclass(frozen=True)
class BotEndpoint:
    """A bot as the runner sees it. The same endpoint may sit in several seats (partnerships)."""

    url: str
    secret: str | None = None
    name: str = "bot"


@dataclass(frozen=True)
class PlayCall:
    """One move request and what came of it, facts and play together.

    `move` is the play the engine recorded for this call, `log["rounds"][round - 1]["plays"]
    [play - 1]` (round and play are 1-based): the bot's own move, or the fallback move when
    `fault` is set. It is None on the call that made the seat forfeit: no play was made.
    `latency_ms` is 0 when no request could be sent (as for a refused address). `request` is
    the body sent and `debug` the reply's private debug text: only the bot's owner sees them.
    """

    seat: int
    round: int
    play: int
    move: Move | None
    latency_ms: float
    fault: Fault | None = None
    debug: Debug | None = None
    request: dict[str, Any] | None = None

    def meta(self) -> dict[str, Any]:
        """The per-play facts anyone may see: seat, latency, fault."""
        return {
            "seat": self.seat,
            "latency_ms": self.latency_ms,
            "fault": None if self.fault is None else str(self.fault.kind),
            "detail": None if self.fault is None else self.fault.detail,
        }

    def diagnostics(self) -> dict[str, Any]:
        """The call as a game's diagnostics keep it: where it was (1-based round and play), the
        move played (null on the call that forfeited), the public facts of `meta`, and the
        owner's own: `debug`, `debug_truncated` and the `request` body."""
        return {
            "round": self.round,
            "play": self.play,
            "move": None if self.move is None else self.move.to_str(),
            **self.meta(),
            "debug": None if self.debug is None else self.debug.text,
            "debug_truncated": self.debug is not None and self.debug.truncated,
            "request": self.request,
        }


@dataclass
class GameRecord:
    """Everything a game leaves behind: the engine's log and one `PlayCall` per move request.

    The stored forms (`meta`, `faults`, `to_dict`) are derived from the calls, so each fact is
    kept once.
    """

    log: dict[str, Any]
    calls: list[PlayCall]

    @property
    def result(self) -> dict[str, Any] | None:
        return self.log.get("result")

    @property
    def plays(self) -> list[PlayCall]:
        """The calls that made a play, in the order of the log's plays."""
        return [call for call in self.calls if call.move is not None]

    @property
    def meta(self) -> list[list[dict[str, Any]]]:
        """`meta[r][p]` belongs to `log["rounds"][r]["plays"][p]`: its seat, `latency_ms`, and
        `fault`/`detail` (null when the bot's own move was played)."""
        rounds: list[list[dict[str, Any]]] = [[] for _ in self.log["rounds"]]
        for call in self.plays:
            rounds[call.round - 1].append(call.meta())
        return rounds

    @property
    def faults(self) -> list[dict[str, Any]]:
        """Every fault with its seat, 1-based round and play number; a forfeit's last fault
        names the play that was never made."""
        return [
            {"seat": call.seat, "round": call.round, "play": call.play, **call.fault.to_dict()}
            for call in self.calls
            if call.fault is not None
        ]

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        """Every move request in order (the one that forfeited too), see `PlayCall.diagnostics`."""
        return [call.diagnostics() for call in self.calls]

    def to_dict(self) -> dict[str, Any]:
        return {"log": self.log, "meta": self.meta, "faults": self.faults}


async def play_game(
    *,
    ruleset: Ruleset,
    seed: int,
    bots: Sequence[BotEndpoint],
    game_id: str | int,
    timeout_ms: int,
    caller: Caller,
    anonymous: bool = False,
    max_faults: int = DEFAULT_MAX_FAULTS,
    log_url: str | None = None,
    on_play: Callable[[PlayCall], None] | None = None,
) -> GameRecord:
    """Play a whole game; `bots[i]` plays seat `i`. Never raises because of a bot.

    `on_play`, when given, is called with each `PlayCall` as soon as the engine recorded it (the
    live view's feed); it runs on the game's event loop and must not block. `anonymous` (rated
    play) names the seats `seat 0`, `seat 1`... in the start notice and move requests; the end
    notice names the bots.
    """
    if len(bots) != ruleset.players:
        raise ValueError(f"{ruleset.players} seats but {len(bots)} bots")
    referee = Referee(Game.new(ruleset, seed=seed), seat_names=[bot.name for bot in bots],
                      game_id=game_id, timeout_ms=timeout_ms, max_faults=max_faults,
                      anonymous=anonymous)  # fmt: skip
    clients = [caller.client(bot.url, bot.secret) for bot in bots]
    await asyncio.gather(*(
        client.post("start", notice, timeout_ms)
        for client, notice in zip(clients, referee.start_notices(), strict=True)
    ))  # fmt: skip

    calls: list[PlayCall] = []
    while not referee.is_over:
        turn = referee.turn()
        answer = await clients[turn.seat].move(turn.request, timeout_ms)
        ruling = referee.judge(turn, answer)
        call = PlayCall(turn.seat, turn.round, turn.play, ruling.move, answer.latency_ms,
                        ruling.fault, answer.debug, turn.request)  # fmt: skip
        calls.append(call)
        if on_play is not None:
            on_play(call)

    await asyncio.gather(*(
        client.post("end", notice, timeout_ms)
        for client, notice in zip(clients, referee.end_notices(log_url), strict=True)
    ))  # fmt: skip
    return GameRecord(log=referee.game.log(), calls=calls)


def play_game_sync(*, allow_private: bool = False, **kwargs: Any) -> GameRecord:
    """`play_game` from sync code, with a `Caller` of its own that is closed afterwards."""

    async def main() -> GameRecord:
        async with Caller(allow_private=allow_private) as caller:
            return await play_game(caller=caller, **kwargs)

    return run_sync(main)
