"""How fast the rules engine referees random legal play, on one core: both builds, one run.

    .venv/bin/python benchmarks/engine.py [--seconds 0.5] [--repeat 12] [--warmup 1]

Each build (pure Python, and compiled when ``make engine-build`` made one) runs in its own worker
process (``ESCOBA_ENGINE=python`` / ``compiled``), and the two take turns: run 1 of a
configuration on one build, then on the other, and so on, so that both see the same load. Each
run plays whole games through the public API (``legal_moves`` then ``apply``, a uniformly random
legal move each time, fresh seeds for every game) and builds every game's full ``escoba-log/1``
document at the end, as the match runner does. Time is the worker's CPU time, so waiting for the
CPU while other processes share the machine does not count; cache and memory contention still
does, so, as with ``timeit``, the best of ``--repeat`` short runs is reported (the median run is
printed too). Every configuration is warmed up first, because the engine's capture and move
caches are shared by all rulesets, as in a long-running worker.

Then what a search pays per simulated move: ``clone()`` + ``apply()`` of a random legal move, over
2,000 positions taken from seeded games, and one ``Determinizer.sample()``.

The last lines are one per configuration and one per search measurement, each build's figure
and the ratio: ``<ruleset> <players>p: python <R> rounds/s, compiled <R> rounds/s, <x>×``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGURATIONS = [("classic", 2), ("classic", 3), ("classic", 4), ("del15", 2), ("del15", 3),
                  ("del15", 4)]  # fmt: skip
BUILDS = ("python", "compiled")


# -- the worker: one build, commands on stdin, answers on stdout ------------------------------


def play(ruleset: object, first_seed: int, seconds: float) -> tuple[int, int, float]:
    """Play games for about ``seconds`` of CPU time; returns (rounds, games, CPU seconds)."""
    from games.engine import Game

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


def positions(count: int) -> list[tuple[object, object]]:
    """``count`` positions of classic 2p games (every 3rd turn), each with a random legal move."""
    from games.engine import Game, Ruleset

    ruleset = Ruleset.from_preset("classic")
    chooser = random.Random(99)
    found: list[tuple[object, object]] = []
    seed = 0
    while len(found) < count:
        game = Game.new(ruleset, 10**7 + seed)
        seed += 1
        turn = 0
        while not game.is_over and len(found) < count:
            moves = game.legal_moves()
            if turn % 3 == 1:
                found.append((game.clone(), chooser.choice(moves)))
            game.apply(chooser.choice(moves))
            turn += 1
    return found


def search_costs(repeat: int) -> dict[str, float]:
    """Microseconds per clone(), per clone()+apply() and per Determinizer.sample() (best of
    ``repeat``), over the same 2,000 positions for every build."""
    from games.engine import Determinizer

    found = positions(2000)
    samplers = [Determinizer(game.view(game.current_seat)) for game, _ in found[:500]]
    rng = random.Random(5)

    def best(run: object, count: int) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            run()  # type: ignore[operator]
            times.append(time.process_time() - start)
        return min(times) / count * 1e6

    def clones() -> None:
        for game, _ in found:
            game.clone()

    def clone_applies() -> None:
        for game, move in found:
            game.clone().apply(move)

    def samples() -> None:
        for sampler in samplers:
            sampler.sample(rng)

    return {
        "clone": best(clones, len(found)),
        "clone+apply": best(clone_applies, len(found)),
        "determinize sample": best(samples, len(samplers)),
    }


def worker() -> None:
    from games.engine import BUILD, BUILD_REASON, Ruleset

    print(json.dumps({"build": BUILD, "reason": BUILD_REASON}), flush=True)
    rulesets = {}
    for line in sys.stdin:
        command = json.loads(line)
        if command["do"] == "play":
            key = (command["ruleset"], command["players"])
            if key not in rulesets:
                rulesets[key] = Ruleset.from_preset(key[0], {"players": key[1]})
            rounds, games, elapsed = play(rulesets[key], command["seed"], command["seconds"])
            answer: dict[str, object] = {"rounds": rounds, "games": games, "cpu": elapsed}
        else:
            answer = search_costs(command["repeat"])
        print(json.dumps(answer), flush=True)


# -- the driver ----------------------------------------------------------------------------


class Worker:
    def __init__(self, build: str) -> None:
        environment = {**os.environ, "ESCOBA_ENGINE": build}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environment,
            cwd=ROOT,
        )
        hello = self.process.stdout.readline()  # type: ignore[union-attr]
        if not hello:
            raise RuntimeError(f"the {build} worker did not start")
        self.hello = json.loads(hello)

    def ask(self, **command: object) -> dict[str, float]:
        self.process.stdin.write(json.dumps(command) + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.process.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="CPU seconds of one timed run")
    parser.add_argument("--repeat", type=int, default=12, help="timed runs per configuration")
    parser.add_argument("--warmup", type=float, default=1.0, help="CPU seconds per configuration")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"load average {load:.2f}, best of {args.repeat} x {args.seconds:g} s")  # fmt: skip
    workers = {}
    for build in BUILDS:
        try:
            workers[build] = Worker(build)
        except (RuntimeError, ValueError) as error:
            print(f"  {build} build: not available ({error}); run `make engine-build`")
            continue
        print(f"  {build} build: {workers[build].hello['reason']}")
    for name, players in CONFIGURATIONS:
        for worker_process in workers.values():
            worker_process.ask(do="play", ruleset=name, players=players, seed=10**6,
                               seconds=args.warmup)  # fmt: skip
    lines = []
    for name, players in CONFIGURATIONS:
        rates: dict[str, list[float]] = {build: [] for build in workers}
        best_games: dict[str, float] = {build: 0.0 for build in workers}
        for run in range(args.repeat):
            for build, worker_process in workers.items():
                answer = worker_process.ask(do="play", ruleset=name, players=players,
                                            seed=run * 10**5, seconds=args.seconds)  # fmt: skip
                rates[build].append(answer["rounds"] / answer["cpu"])
                best_games[build] = max(best_games[build], answer["games"] / answer["cpu"])
        parts = []
        for build in workers:
            best = max(rates[build])
            print(f"  {name} {players}p {build}: median run {median(rates[build]):,.0f} "
                  f"rounds/s, best {best:,.0f}, {best_games[build]:,.0f} games/s")  # fmt: skip
            parts.append(f"{build} {max(rates[build]):.0f} rounds/s")
        lines.append(f"{name} {players}p: {', '.join(parts)}{_ratio(rates, max)}")
    costs = {build: worker_process.ask(do="search", repeat=max(3, args.repeat // 2))
             for build, worker_process in workers.items()}  # fmt: skip
    for measure in ("clone", "clone+apply", "determinize sample"):
        parts = [f"{build} {costs[build][measure]:.2f} µs" for build in workers]
        ratio = ""
        if len(workers) == 2:
            ratio = f", {costs['python'][measure] / costs['compiled'][measure]:.1f}×"
        lines.append(f"{measure}: {', '.join(parts)}{ratio}")
    for worker_process in workers.values():
        worker_process.close()
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {end_load:.2f} at the end")
    for line in lines:
        print(line)


def _ratio(rates: dict[str, list[float]], pick: object) -> str:
    if len(rates) != 2:
        return ""
    return f", {pick(rates['compiled']) / pick(rates['python']):.1f}×"  # type: ignore[operator]


if __name__ == "__main__":
    main()
