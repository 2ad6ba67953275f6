"""How fast the rules engine referees random legal play, on one core.

    .venv/bin/python benchmarks/engine.py [--seconds 0.5] [--repeat 12] [--warmup 1]

Each configuration plays whole games through the public API (``legal_moves`` then ``apply``, a
uniformly random legal move each time, fresh seeds for every game) and builds every game's full
``escoba-log/1`` document at the end, as the match runner does. Time is this process's CPU time,
so waiting for the CPU while other processes share the machine does not count; cache and memory
contention still does, so, as with ``timeit``, the best of ``--repeat`` short runs is reported
(the median run is printed too). Every configuration is warmed up first, because the engine's
capture and move caches are shared by all rulesets, as in a long-running worker. The last lines
are one per configuration: ``<ruleset> <players>p: <R> rounds/s, <G> games/s``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.engine import Game, Ruleset  # noqa: E402

CONFIGURATIONS = [("classic", 2), ("classic", 3), ("classic", 4), ("del15", 2), ("del15", 3),
                  ("del15", 4)]  # fmt: skip


def play(ruleset: Ruleset, first_seed: int, seconds: float) -> tuple[int, int, float]:
    """Play games for about ``seconds`` of CPU time; returns (rounds, games, CPU seconds)."""
    chooser = random.Random(first_seed)
    pick = chooser.random
    rounds = games = 0
    seed = first_seed
    start = time.process_time()
    deadline = start + seconds
    while True:
        game = Game.new(ruleset, seed)
        while not game.is_over:
            moves = game.legal_moves()
            game.apply(moves[int(pick() * len(moves))])
        game.log()
        rounds += game.round
        games += 1
        seed += 1
        now = time.process_time()
        if now >= deadline:
            return rounds, games, now - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="CPU seconds of one timed run")
    parser.add_argument("--repeat", type=int, default=12, help="timed runs per configuration")
    parser.add_argument("--warmup", type=float, default=1.0, help="CPU seconds per configuration")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"load average {load:.2f}, best of {args.repeat} x {args.seconds:g} s")  # fmt: skip
    rulesets = [Ruleset.from_preset(name, {"players": players}) for name, players in CONFIGURATIONS]
    for ruleset in rulesets:
        # The capture and move caches are shared by every ruleset, as in a long-running worker:
        # warm them with every configuration before timing any.
        play(ruleset, 10**6, args.warmup)
    lines = []
    for (name, players), ruleset in zip(CONFIGURATIONS, rulesets, strict=True):
        rates, best_games = [], 0.0
        for run in range(args.repeat):
            rounds, games, elapsed = play(ruleset, run * 10**5, args.seconds)
            rates.append(rounds / elapsed)
            best_games = max(best_games, games / elapsed)
        best_rounds = max(rates)
        print(f"  {name} {players}p: median run {median(rates):,.0f} rounds/s, "
              f"best {best_rounds:,.0f}")  # fmt: skip
        lines.append(f"{name} {players}p: {best_rounds:.0f} rounds/s, {best_games:.0f} games/s")
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {end_load:.2f} at the end")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
