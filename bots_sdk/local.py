"""Play bots against each other in-process: no HTTP, same requests and same referee as the arena.

Each move goes through the arena's referee (`games.referee`: the request built by
`games.wire.move_request`, the answer judged for legality and lateness, a faulting move replaced
by the fallback move, a seat over `max_faults` faults forfeiting) and `BotState.from_request`,
exactly as a served bot would see it, so a bot that does well here does the same behind
`serve`. Use it to tune a bot before registering it:
`python -m bots_sdk duel mybot:choose bots_sdk.examples.greedy:choose`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.engine import DEFAULT_PRESET, Game, Result, Ruleset
from games.faults import DEFAULT_MAX_FAULTS, Fault, FaultKind
from games.protocol_check import DEFAULT_TIMEOUT_MS
from games.referee import Answer, Referee
from games.wire import move_reply_debug

from .bot import Bot, BotError, Choose, as_bot
from .state import BotState


def ask(bot: Bot, body: dict[str, Any]) -> Answer:
    """Ask `bot` in this process for its move to a request body, timed; the referee judges the
    answer as it judges the reply the bot would send when served: its move (legality and
    lateness are the referee's to judge), or, when `choose` raises or returns no move, the HTTP
    500 the SDK server answers then."""
    started = time.perf_counter()
    try:
        move, debug = bot.answer(BotState.from_request(body))
    except BotError as exc:
        latency = (time.perf_counter() - started) * 1000
        fault = Fault(FaultKind.HTTP_STATUS, f"HTTP 500: {exc}")
        return Answer(fault=fault, latency_ms=latency, deadline_kept=False)
    latency = (time.perf_counter() - started) * 1000
    # The debug text as the arena keeps it (cut to DEBUG_MAX_BYTES); the move is already one.
    kept = None if debug is None else move_reply_debug({"debug": debug})
    return Answer(move, None, latency, kept, deadline_kept=False)


def referee_game(
    bots: Sequence[Bot | Choose],
    *,
    seed: int,
    ruleset: Ruleset | None = None,
    game_id: str | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_faults: int = DEFAULT_MAX_FAULTS,
) -> Referee:
    """Play one game to its end, `bots[i]` in seat i, and hand back its referee (the game, its
    result and log, and each seat's faults)."""
    ruleset = ruleset or Ruleset.from_preset(DEFAULT_PRESET, {"players": len(bots)})
    players = [as_bot(target) for target in bots]
    referee = Referee(Game.new(ruleset, seed=seed), seat_names=[player.name for player in players],
                      game_id=game_id or f"local-{seed}", timeout_ms=timeout_ms,
                      max_faults=max_faults)  # fmt: skip
    while not referee.is_over:
        turn = referee.turn()
        referee.judge(turn, ask(players[turn.seat], turn.request))
    return referee


def play_game(
    bots: Sequence[Bot | Choose],
    *,
    seed: int,
    ruleset: Ruleset | None = None,
    game_id: str | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Result:
    """Play one game, `bots[i]` in seat i, refereed as the arena referees it; its result."""
    referee = referee_game(bots, seed=seed, ruleset=ruleset, game_id=game_id, timeout_ms=timeout_ms)
    result = referee.game.result
    assert result is not None
    return result


@dataclass(frozen=True)
class DuelResult:
    games: int
    wins: int
    losses: int
    draws: int
    # Faults of `first` and of `second` over all games (each replaced by the fallback move).
    faults: int = 0
    opponent_faults: int = 0

    @property
    def win_rate(self) -> float:
        """Wins over decided games, so draws count for neither side."""
        decided = self.wins + self.losses
        return self.wins / decided if decided else 0.0


def duel(
    first: Bot | Choose,
    second: Bot | Choose,
    *,
    games: int,
    seed: int = 0,
    ruleset: Ruleset | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> DuelResult:
    """`first` against `second` over `games` two-player games, counted for `first`.

    Games go in pairs on the same seed with the seats swapped (duplicate deals), so neither bot
    gains from the luck of the cards or of the seat. `timeout_ms` is the time each move may
    take, sent as the request's `timeout_ms` and `time_bank_ms`; a later answer is a fault.
    """
    wins = losses = draws = 0
    faults = [0, 0]
    for number in range(games):
        game_seed = seed + number // 2
        swapped = number % 2 == 1
        order = (second, first) if swapped else (first, second)
        referee = referee_game(order, seed=game_seed, ruleset=ruleset,
                               game_id=f"duel-{number}", timeout_ms=timeout_ms)  # fmt: skip
        result = referee.game.result
        assert result is not None
        first_team = 1 if swapped else 0
        faults[0] += referee.faults[first_team]
        faults[1] += referee.faults[1 - first_team]
        if result.winner is None:
            draws += 1
        elif result.winner == first_team:
            wins += 1
        else:
            losses += 1
    return DuelResult(games, wins, losses, draws, faults[0], faults[1])
