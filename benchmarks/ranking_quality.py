"""Ranking quality: how many games a league needs before random < greedy < expert is certain.

Run from the repository root (about two minutes on two cores with the defaults):

    .venv/bin/python -m benchmarks.ranking_quality [--deals 300] [--leagues 2000]

The example bots play in-process (``bots_sdk.local.play_game``: the same move requests as the
arena sends, no HTTP). For each pair of bots, ``--deals`` units of two games each, the seats
swapped between the two games, in two designs with the same number of games:

- duplicate deals: both games of a unit are dealt from the same seed, so each bot plays the
  other's cards once and the luck of the deal cancels;
- independent deals: the two games of a unit have seeds of their own.

A unit goes to the bot that scored more in it (win 1, draw 1/2), or is a tie. A pair counts as
separated when a two-sided sign test over the decided units rejects "equally strong" at 5 %. A
league of G games per pair separates the three bots when both neighbouring pairs (random-greedy,
greedy-expert) are separated. Its probability is estimated by drawing ``--leagues`` leagues of
G/2 units at random (with replacement) from the units played; the answer is the smallest G for
which at least 95 % of leagues separate the bots.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor

from bots_sdk.examples import expert, greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.local import play_game

BOTS = {"random": random_bot.choose, "greedy": greedy.choose, "expert": expert.choose}
PAIRS = [("random", "greedy"), ("greedy", "expert")]
DESIGNS = ("duplicate", "independent")
CONFIDENCE = 0.95
BUDGETS = [*range(2, 62, 2), 70, 80, 100, 120, 150, 200, 250]


def score(result, seat: int) -> float:
    """The bot in ``seat``'s score: 1 a win, 1/2 a draw (two-player games: team = seat)."""
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == seat else 0.0


def play_unit(args: tuple[str, str, str, int]) -> float:
    """``strong``'s mean score over one unit of two games, seats swapped."""
    weak, strong, design, unit = args
    if design == "duplicate":
        seeds = (unit, unit)
    else:
        seeds = (1_000_000 + 2 * unit, 1_000_000 + 2 * unit + 1)
    first = play_game([BOTS[strong], BOTS[weak]], seed=seeds[0])
    second = play_game([BOTS[weak], BOTS[strong]], seed=seeds[1])
    return (score(first, 0) + score(second, 1)) / 2


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: how likely so lopsided a split is between equal bots."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def separated(units: list[float]) -> bool:
    wins = sum(1 for u in units if u > 0.5)
    losses = sum(1 for u in units if u < 0.5)
    return wins > losses and sign_test_p(wins, losses) < 1 - CONFIDENCE


def league_power(pools: list[list[float]], games: int, leagues: int, rng: random.Random) -> float:
    """Share of random leagues with ``games`` games per pair that separate every pair."""
    units = games // 2
    hits = 0
    for _ in range(leagues):
        hits += all(separated(rng.choices(pool, k=units)) for pool in pools)
    return hits / leagues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=300, help="Units (2 games) per pair/design.")
    parser.add_argument("--leagues", type=int, default=2000, help="Random leagues per budget.")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    jobs = [
        (weak, strong, design, unit)
        for design in DESIGNS
        for weak, strong in PAIRS
        for unit in range(args.deals)
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        results = list(pool.map(play_unit, jobs, chunksize=10))
    elapsed = time.perf_counter() - started
    print(f"{2 * len(jobs)} games in {elapsed:.0f} s on {args.processes} processes")

    units: dict[tuple[str, tuple[str, str]], list[float]] = {}
    for (weak, strong, design, _), value in zip(jobs, results, strict=True):
        units.setdefault((design, (weak, strong)), []).append(value)

    for design in DESIGNS:
        for pair in PAIRS:
            pool_units = units[(design, pair)]
            mean = sum(pool_units) / len(pool_units)
            decided = [u for u in pool_units if u != 0.5]
            print(
                f"{design:12} {pair[1]} over {pair[0]}: mean score {mean:.3f}, "
                f"units decided {len(decided)}/{len(pool_units)}"
            )

    rng = random.Random(2026)
    print(f"\nleagues separating random < greedy < expert at {CONFIDENCE:.0%} (sign test):")
    print("games/pair  " + "  ".join(f"{d:>11}" for d in DESIGNS))
    needed: dict[str, int | None] = dict.fromkeys(DESIGNS)
    for games in BUDGETS:
        powers = {
            d: league_power([units[(d, p)] for p in PAIRS], games, args.leagues, rng)
            for d in DESIGNS
        }
        print(f"{games:10}  " + "  ".join(f"{powers[d]:11.0%}" for d in DESIGNS))
        for design, power in powers.items():
            if needed[design] is None and power >= CONFIDENCE:
                needed[design] = games
        if all(needed.values()):
            break
    for design in DESIGNS:
        games = needed[design]
        text = f"{games} games per pair ({3 * games} in the league)" if games else "more than tried"
        print(f"{design}: {text}")
    if all(needed.values()):
        print(f"independent / duplicate: {needed['independent'] / needed['duplicate']:.2f}")


if __name__ == "__main__":
    main()
