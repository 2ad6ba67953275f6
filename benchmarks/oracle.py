"""What a cheater gains: the oracle example against expert, on duplicate sets and on fresh deals.

The oracle (`bots_sdk/examples/oracle.py`) keeps every hand it is dealt and deals the hands it
can link to their seats in its search. Its honest twin is the same bot with its memory wiped
every game. Both play the same sets against the expert example, in-process (the arena's own
move requests, `games.wire.move_request`, no HTTP), two games a set with the seats swapped,
played in lockstep (one play of each game in turn, the oracle receiving both games' requests):

- `duplicate`: both games of a set on one deal (today's duplicate sets);
- `fresh`: each game its own deal (what rated play deals).

A game counts 1 for a win, ½ for a draw; a bot's Elo against expert is `400 log10(s / (1 - s))`
of its mean score s, and the gain is the oracle's Elo less its twin's on the same sets, with a
95 % interval from a bootstrap over sets (the twin and the oracle play the same deals, so the
comparison is paired). On fresh deals the oracle can link nothing, so it plays move for move as
its twin does: its gain is 0 within its interval.

    python benchmarks/oracle.py --sets 600 --deals 8 --workers 2
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bots_sdk.examples import expert  # noqa: E402
from bots_sdk.examples.oracle import Oracle  # noqa: E402
from bots_sdk.state import BotState  # noqa: E402
from games.engine import Game, Move, Ruleset  # noqa: E402
from games.wire import move_request  # noqa: E402

Chooser = Callable[[BotState], Move]
SEATINGS = ((0, 1), (1, 0))  # game 1: the oracle in seat 0; game 2: seats swapped
SCHEMES = ("duplicate", "fresh")


def request_state(game: Game, game_id: str) -> BotState:
    """What the arena sends the seat to move, as the SDK hands it to `choose`."""
    view = game.view(game.current_seat)
    body = move_request(
        view,
        game_id=game_id,
        timeout_ms=1000,
        seat_names=[f"seat {seat}" for seat in range(game.ruleset.players)],
        latency_ms=None,
        time_bank_ms=1000,
    )
    return BotState.from_request(body)


def play_lockstep(
    seeds: Sequence[int],
    seatings: Sequence[Sequence[Chooser]],
    ruleset: Ruleset,
    game_ids: Sequence[str],
    on_request: Callable[[int, BotState, Game], None] | None = None,
) -> list[Game]:
    """Play the games together, one play of each in turn: `seatings[g][seat]` plays `seat` of
    game `g`. `on_request(g, state, game)` sees each request before it is answered."""
    games = [Game.new(ruleset, seed=seed) for seed in seeds]
    while not all(game.is_over for game in games):
        for number, game in enumerate(games):
            if game.is_over:
                continue
            state = request_state(game, game_ids[number])
            if on_request is not None:
                on_request(number, state, game)
            game.apply(seatings[number][game.current_seat](state))
    return games


def set_seeds(scheme: str, number: int) -> tuple[int, int]:
    """The deals of set `number`: one seed twice (duplicate) or two seeds (fresh)."""
    draw = random.Random(f"oracle-{number}")
    first = draw.getrandbits(62)
    return (first, first) if scheme == "duplicate" else (first, draw.getrandbits(62))


def score_of(game: Game, seat: int) -> float:
    result = game.result
    assert result is not None
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == game.ruleset.team_of(seat) else 0.0


@dataclass
class SetResult:
    scheme: str
    cheater: float  # the oracle's points in the set's two games
    twin: float
    links: int  # requests in which the oracle knew a hand it was not dealt there


def play_sets(scheme: str, numbers: Sequence[int], deals: int) -> list[SetResult]:
    """Each set played twice on the same deals: by the oracle (one memory for all) and by its
    twin (a fresh memory each game)."""
    ruleset = Ruleset.from_preset("classic", {})
    cheater = Oracle(max_deals=deals)
    results = []
    for number in numbers:
        seeds = set_seeds(scheme, number)
        ids = [f"{scheme}-{number}-{game}" for game in (1, 2)]
        before = cheater.links
        seatings = [[cheater.choose, expert.choose], [expert.choose, cheater.choose]]
        played = play_lockstep(seeds, seatings, ruleset, ids)
        cheat_points = sum(
            score_of(game, seats[0]) for game, seats in zip(played, SEATINGS, strict=True)
        )
        twins = [Oracle(max_deals=deals), Oracle(max_deals=deals)]
        seatings = [[twins[0].choose, expert.choose], [expert.choose, twins[1].choose]]
        played = play_lockstep(seeds, seatings, ruleset, ids)
        twin_points = sum(
            score_of(game, seats[0]) for game, seats in zip(played, SEATINGS, strict=True)
        )
        results.append(SetResult(scheme, cheat_points, twin_points, cheater.links - before))
    return results


def elo(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return 400 * math.log10(score / (1 - score))


def gain_interval(rows: Sequence[SetResult], resamples: int = 4000) -> tuple[float, float, float]:
    """The oracle's Elo gain over its twin, and a 95 % bootstrap interval over sets."""
    cheater = np.array([row.cheater / 2 for row in rows])
    twin = np.array([row.twin / 2 for row in rows])
    gain = elo(cheater.mean()) - elo(twin.mean())
    draw = np.random.default_rng(7)
    picks = draw.integers(0, len(rows), size=(resamples, len(rows)))
    gains = [elo(cheater[pick].mean()) - elo(twin[pick].mean()) for pick in picks]
    low, high = np.percentile(gains, [2.5, 97.5])
    return gain, float(low), float(high)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", type=int, default=600, help="sets per scheme")
    parser.add_argument("--deals", type=int, default=8, help="search samples per move")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cpu = time.process_time()
    rows: list[SetResult] = []
    chunks = [
        (scheme, list(range(start, args.sets, args.workers)), args.deals)
        for scheme in SCHEMES
        for start in range(args.workers)
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        for chunk in pool.map(play_sets, *zip(*chunks, strict=True)):
            rows.extend(chunk)
    print(f"{args.sets} sets per scheme (2 games each, seats swapped), {args.deals} samples/move")
    print(f"{'scheme':10} {'oracle':>7} {'twin':>7} {'gain (Elo)':>11} {'95% interval':>17} links")
    for scheme in SCHEMES:
        mine = [row for row in rows if row.scheme == scheme]
        gain, low, high = gain_interval(mine)
        cheat = sum(row.cheater for row in mine) / (2 * len(mine))
        twin = sum(row.twin for row in mine) / (2 * len(mine))
        links = sum(row.links for row in mine)
        print(f"{scheme:10} {cheat:7.3f} {twin:7.3f} {gain:+11.0f} {low:+8.0f} .. {high:+5.0f} "
              f"{links}")  # fmt: skip
    wall = time.perf_counter() - started
    print(f"wall {wall:.0f} s (this process's CPU {time.process_time() - cpu:.1f} s); "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
