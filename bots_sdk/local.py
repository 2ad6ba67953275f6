"""Play bots against each other in-process: no HTTP, same requests as the arena sends.

Each move goes through `games.wire.move_request` and `BotState.from_request`, exactly as a served
bot would see it, so a bot that does well here does the same behind `serve`. Use it to tune a bot
before registering it: `python -m bots_sdk duel mybot:choose bots_sdk.examples.greedy:choose`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from games.engine import Game, Result, Ruleset
from games.wire import move_request

from .bot import Bot, Choose, as_bot, to_move
from .state import BotState

TIMEOUT_MS = 1000


def play_game(
    bots: Sequence[Bot | Choose],
    *,
    seed: int,
    ruleset: Ruleset | None = None,
    game_id: str | None = None,
    timeout_ms: int = TIMEOUT_MS,
) -> Result:
    """Play one game, `bots[i]` in seat i; a move that is not legal raises the engine's error."""
    ruleset = ruleset or Ruleset.from_preset("classic", {"players": len(bots)})
    players = [as_bot(target) for target in bots]
    names = [player.name for player in players]
    game = Game.new(ruleset, seed=seed)
    game_id = game_id or f"local-{seed}"
    while not game.is_over:
        seat = game.current_seat
        body = move_request(
            game.view(seat),
            game_id=game_id,
            timeout_ms=timeout_ms,
            seat_names=names,
            latency_ms=None,
            time_bank_ms=timeout_ms,
        )
        game.apply(to_move(players[seat].choose(BotState.from_request(body))))
    return game.result


@dataclass(frozen=True)
class DuelResult:
    games: int
    wins: int
    losses: int
    draws: int

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
    timeout_ms: int = TIMEOUT_MS,
) -> DuelResult:
    """`first` against `second` over `games` two-player games, counted for `first`.

    Games go in pairs on the same seed with the seats swapped (duplicate deals), so neither bot
    gains from the luck of the cards or of the seat. `timeout_ms` is the time each move may
    take, sent as the request's `timeout_ms` and `time_bank_ms`.
    """
    wins = losses = draws = 0
    for number in range(games):
        game_seed = seed + number // 2
        swapped = number % 2 == 1
        order = (second, first) if swapped else (first, second)
        result = play_game(
            order, seed=game_seed, ruleset=ruleset, game_id=f"duel-{number}", timeout_ms=timeout_ms
        )
        first_team = 1 if swapped else 0
        if result.winner is None:
            draws += 1
        elif result.winner == first_team:
            wins += 1
        else:
            losses += 1
    return DuelResult(games, wins, losses, draws)
