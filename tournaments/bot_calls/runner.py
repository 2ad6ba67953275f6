"""Plays one game between bot endpoints over `escoba/1`, refereed by the engine.

The runner is where the fault policy of `games.faults` is applied: a faulting move (any fault the
caller reports, or a move the engine refuses) is replaced by the fallback move, and a seat that
faults more than `max_faults` times forfeits. Start and end notices are courtesy calls: their
failures are ignored and never count as faults.

Games are plain coroutines on a shared `Caller`, so a league worker can run dozens of them
concurrently in one event loop against slow bots.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .caller import Caller, run_sync
from .engine import Game, IllegalMoveError, Ruleset
from .faults import DEFAULT_MAX_FAULTS, Fault, FaultKind, fallback_move, forfeits
from .protocol import WireHistory, end_notice, move_request, round_lucky_deal, start_notice


@dataclass(frozen=True)
class BotEndpoint:
    """A bot as the runner sees it. The same endpoint may sit in several seats (partnerships)."""

    url: str
    secret: str | None = None
    name: str = "bot"


@dataclass
class GameRecord:
    """Everything a game leaves behind, made of plain JSON types.

    `meta[r][p]` belongs to `log["rounds"][r]["plays"][p]`: that call's `latency_ms` (0 when no
    request could be sent, as for a refused address), and `fault`/`detail` (null when the bot's
    own move was played, else the fault that made the runner play the fallback move).
    `faults` lists every fault with its seat, 1-based round and play number; a forfeit's last
    fault names the play that was never made.
    """

    log: dict[str, Any]
    meta: list[list[dict[str, Any]]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any] | None:
        return self.log.get("result")

    def to_dict(self) -> dict[str, Any]:
        return {"log": self.log, "meta": self.meta, "faults": self.faults}


async def play_game(
    *,
    ruleset: Ruleset,
    seed: int,
    bots: Sequence[BotEndpoint],
    game_id: str | int,
    match_id: str | int,
    timeout_ms: int,
    caller: Caller,
    max_faults: int = DEFAULT_MAX_FAULTS,
    log_url: str | None = None,
) -> GameRecord:
    """Play a whole game; `bots[i]` plays seat `i`. Never raises because of a bot."""
    if len(bots) != ruleset.players:
        raise ValueError(f"{ruleset.players} seats but {len(bots)} bots")
    game = Game.new(ruleset, seed=seed)
    names = [bot.name for bot in bots]
    clients = [caller.client(bot.url, bot.secret) for bot in bots]
    ids = {"game_id": game_id, "match_id": match_id, "timeout_ms": timeout_ms}
    await asyncio.gather(*(
        client.post("start", start_notice(ruleset=ruleset, seat=seat, seat_names=names, **ids),
                    timeout_ms)
        for seat, client in enumerate(clients)
    ))

    meta: list[list[dict[str, Any]]] = []
    faults: list[dict[str, Any]] = []
    fault_counts = [0] * len(bots)
    latencies: list[float | None] = [None] * len(bots)
    lucky_round, lucky = 0, None
    history = WireHistory()
    while not game.is_over:
        seat = game.current_seat
        assert seat is not None
        view = game.view(seat)
        if view.round != lucky_round:
            lucky_round, lucky = view.round, round_lucky_deal(game)
        body = move_request(view, seat_names=names, latency_ms=latencies[seat],
                            time_bank_ms=timeout_ms, lucky_deal=lucky,
                            history=history.of(view), **ids)
        reply = await clients[seat].move(body, timeout_ms)
        latencies[seat] = reply.latency_ms
        fault = reply.fault
        if fault is None:
            try:
                game.apply(reply.move)
            except IllegalMoveError as error:
                fault = Fault(FaultKind.ILLEGAL_MOVE, str(error))
        while len(meta) < view.round:
            meta.append([])
        if fault is not None:
            fault_counts[seat] += 1
            faults.append({"seat": seat, "round": view.round, "play": len(view.history) + 1,
                           **fault.to_dict()})
            if forfeits(fault_counts[seat], max_faults):
                game.forfeit(seat, reason="faults")
                break
            game.apply(fallback_move(view.legal_moves))
        meta[view.round - 1].append({
            "latency_ms": reply.latency_ms,
            "fault": None if fault is None else str(fault.kind),
            "detail": None if fault is None else fault.detail,
        })

    log = game.log()
    while len(meta) < len(log["rounds"]):
        meta.append([])
    result = game.result
    assert result is not None
    await asyncio.gather(*(
        client.post("end", end_notice(ruleset=ruleset, seat=seat, seat_names=names,
                                      result=result, log_url=log_url, **ids), timeout_ms)
        for seat, client in enumerate(clients)
    ))
    return GameRecord(log=log, meta=meta, faults=faults)


def play_game_sync(*, allow_private: bool = False, **kwargs: Any) -> GameRecord:
    """`play_game` from sync code, with a `Caller` of its own that is closed afterwards."""

    async def main() -> GameRecord:
        async with Caller(allow_private=allow_private) as caller:
            return await play_game(caller=caller, **kwargs)

    return run_sync(main())
