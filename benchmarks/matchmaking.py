"""What one pairing decision of the ladder's matchmaker costs, at 1,000 bots (goal: under 1 ms).

    .venv/bin/python benchmarks/matchmaking.py [--bots 1000] [--repeat 5]

A pool of ``--bots`` bots with ratings spread over 1,000 Elo points, 20 % of them sharing an
owner with another, some new, intervals of every width, and as many past sets as the service
hands it (``HISTORY_PER_BOT`` per bot). Three figures, best of ``--repeat`` runs, CPU time of
this process:

- **build**: making a ``Matchmaker`` (one sort, one heapify, reading the history), which the
  service does once per fill;
- **decision, idle pool**: ``next_table`` while nobody is busy yet (the walk stops at once);
- **decision, busy pool**: ``next_table`` for the last tables before everyone is at their
  ``max_sets_per_bot`` limit (the walk passes over many busy bots: the O(n) end);

and, for scale, the same at 100 and 10,000 bots, to show the growth per decision is far from
quadratic.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments.matchmaking import HISTORY_PER_BOT, Entrant, Matchmaker, Rules  # noqa: E402


def pool(count: int, history: int, seed: int) -> tuple[list[Entrant], list[tuple[int, int]]]:
    rng = random.Random(seed)
    entrants = []
    for bot in range(count):
        shared = rng.random() < 0.2
        entrants.append(
            Entrant(
                bot=bot,
                owner=bot // 2 if shared else count + bot,
                rating=rng.uniform(1000, 2000),
                width=rng.choice([float("inf"), rng.uniform(40, 600)]),
                new=rng.random() < 0.05,
                recent_sets=rng.randrange(0, 30),
            )
        )
    past = [tuple(rng.sample(range(count), 2)) for _ in range(history)]
    return entrants, past


def measure(count: int, history: int, repeat: int) -> dict[str, float]:
    rules = Rules(max_sets_per_bot=2)
    best = {"build": float("inf"), "idle": float("inf"), "busy": float("inf")}
    for run in range(repeat):
        entrants, past = pool(count, history, seed=run)
        start = time.process_time()
        matchmaker = Matchmaker(entrants, rules=rules, history=past, rng=random.Random(run))
        best["build"] = min(best["build"], time.process_time() - start)
        idle = count // 4  # a quarter of the pool's capacity
        start = time.process_time()
        made = len(matchmaker.tables(idle))
        best["idle"] = min(best["idle"], (time.process_time() - start) / made)
        start = time.process_time()
        rest = len(matchmaker.tables(count))  # until nobody can be paired any more
        best["busy"] = min(best["busy"], (time.process_time() - start) / max(rest, 1))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    sizes = sorted({100, args.bots, 10_000})
    for count in sizes:
        figures = measure(count, HISTORY_PER_BOT * count // 2, args.repeat)
        print(
            f"{count:>6} bots: build {figures['build'] * 1e3:7.2f} ms, "
            f"decision idle {figures['idle'] * 1e6:7.1f} us, busy {figures['busy'] * 1e6:7.1f} us"
        )


if __name__ == "__main__":
    main()
