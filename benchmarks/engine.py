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
2,000 positions taken from seeded games, one ``Determinizer.sample()``, and a rollout: a clone of
each position played on at random to the end of its round (which scores the round), as a
determinized search does for every simulation.

The CPU spent building the logs is timed apart as well, so each configuration is also printed
with the log aside (play alone, as the Rust engine of issue 16 was measured), and under it what
bounds the ratio whatever a compiled engine does: this script's own loop (timed by running it
again over the recorded games against stand-ins whose every call is a C function) and the log
cost the same in both builds, so a compiled engine that cost nothing would still take
``loop + compiled log`` a round.

Every configuration is played a second time by the engine's own loop, ``Game.play_random``: the
same games, move for move, with the loop, the choice and the play inside the engine, as a search's
uniform rollout plays them (and as the Rust engine's harness of issue 16 plays its own). The
rollout to the round's end is timed that way too.

The last lines are one per configuration and one per search measurement, each build's figure
and the ratio: ``<ruleset> <players>p: python <R> rounds/s, compiled <R> rounds/s, <x>×``, with
that bound under each configuration and then the engine's own loop, with and without the log.
With ``--before <checkout>`` the two builds of another checkout of the engine (say main, with
its compiled build) take their turns too, printed as ``before python`` and ``before compiled``:
a before/after comparison under the same load.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGURATIONS = [("classic", 2), ("classic", 3), ("classic", 4), ("del15", 2), ("del15", 3),
                  ("del15", 4)]  # fmt: skip
BUILDS = ("python", "compiled")
SEARCH_COSTS = ("clone", "clone+apply", "determinize sample", "rollout to the round's end",
                "rollout by play_random")  # fmt: skip


# -- the worker: one build, commands on stdin, answers on stdout ------------------------------


def play(
    ruleset: object, first_seed: int, seconds: float, in_engine: bool = False
) -> tuple[int, int, float, float]:
    """Play games for about ``seconds`` of CPU time; returns (rounds, games, CPU seconds, CPU
    seconds of those spent building the logs). With ``in_engine`` the engine plays each game
    itself (``Game.play_random``: the same moves as this loop, with the loop inside the engine)."""
    from games.engine import Game

    chooser = random.Random(first_seed)
    pick = chooser.random
    clock = time.process_time
    rounds = games = 0
    logging = 0.0
    seed = first_seed
    start = clock()
    deadline = start + seconds
    while True:
        game = Game.new(ruleset, seed)
        if in_engine:
            game.play_random(chooser, to_game_end=True)
        while not game.is_over:
            moves = game.legal_moves()
            game.apply(moves[int(pick() * len(moves))])
        logged = clock()
        game.log()
        now = clock()
        logging += now - logged
        rounds += game.round
        games += 1
        seed += 1
        if now >= deadline:
            return rounds, games, now - start, logging


class _Replay(list):  # type: ignore[type-arg]
    """A stand-in for a finished game that ``play``'s loop can run again at no engine cost:
    every call it makes is a C function (the recorded legal-move lists handed out in turn, a
    list's ``pop`` for ``apply``, ``not`` for ``is_over``), so timing the loop over replays
    measures the loop alone."""

    __slots__ = ("legal_moves", "apply", "round")
    is_over = property(operator.not_)


def loop_cost(ruleset: object, first_seed: int, seconds: float) -> float:
    """CPU microseconds a round that ``play``'s own loop costs, without the engine: the games
    ``play`` would play from ``first_seed`` are recorded (every legal-move list, as lists of
    the same length), then the loop runs over them again against ``_Replay`` stand-ins."""
    from games.engine import Game

    chooser = random.Random(first_seed)
    pick = chooser.random
    recorded: list[tuple[int, list[list[int]]]] = []
    seed = first_seed
    start = time.process_time()
    while time.process_time() - start < seconds:
        game = Game.new(ruleset, seed)
        lists = []
        while not game.is_over:
            moves = game.legal_moves()
            lists.append([0] * len(moves))
            game.apply(moves[int(pick() * len(moves))])
        recorded.append((game.round, lists))
        seed += 1
    rounds = sum(number for number, _ in recorded)
    best = float("inf")
    for _ in range(5):
        replays = []
        for number, lists in recorded:
            replay = _Replay([0] * len(lists))
            replay.legal_moves = iter([list(moves) for moves in lists]).__next__
            replay.apply = replay.pop
            replay.round = number
            replays.append(replay)
        pick = random.Random(first_seed).random
        total = 0
        started = time.process_time()
        for game in replays:  # the loop of ``play``, line for line, less the log
            while not game.is_over:
                moves = game.legal_moves()
                game.apply(moves[int(pick() * len(moves))])
            total += game.round
        best = min(best, time.process_time() - started)
    return best / rounds * 1e6


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

    def rollouts() -> None:
        pick = random.Random(6).random
        for game, _ in found:
            game = game.clone()
            number = game.round
            while not game.is_over and game.round == number:
                moves = game.legal_moves()
                game.apply(moves[int(pick() * len(moves))])

    def engine_rollouts() -> None:
        rng = random.Random(6)
        for game, _ in found:
            game.clone().play_random(rng)

    return {
        "clone": best(clones, len(found)),
        "clone+apply": best(clone_applies, len(found)),
        "determinize sample": best(samples, len(samplers)),
        "rollout to the round's end": best(rollouts, len(found)),
        "rollout by play_random": best(engine_rollouts, len(found)),
    }


def worker() -> None:
    from games.engine import BUILD, BUILD_REASON, Ruleset

    print(json.dumps({"build": BUILD, "reason": BUILD_REASON, "play_random": True}), flush=True)
    rulesets: dict[tuple[str, int], Ruleset] = {}

    def ruleset_of(command: dict[str, Any]) -> Ruleset:
        key = (command["ruleset"], command["players"])
        if key not in rulesets:
            rulesets[key] = Ruleset.from_preset(key[0], {"players": key[1]})
        return rulesets[key]

    for line in sys.stdin:
        command = json.loads(line)
        if command["do"] == "play":
            rounds, games, elapsed, logging = play(
                ruleset_of(command),
                command["seed"],
                command["seconds"],
                command.get("in_engine", False),
            )
            answer: dict[str, object] = {
                "rounds": rounds, "games": games, "cpu": elapsed, "log_cpu": logging,
            }  # fmt: skip
        elif command["do"] == "loop":
            loop = loop_cost(ruleset_of(command), command["seed"], command["seconds"])
            answer = {"loop_us": loop}
        else:
            answer = search_costs(command["repeat"])
        print(json.dumps(answer), flush=True)


# -- the driver ----------------------------------------------------------------------------


class Worker:
    def __init__(self, build: str, root: Path = ROOT) -> None:
        """A worker on ``build`` of the engine in the checkout at ``root`` (this one, or the
        ``--before`` one, which runs its own copy of this script)."""
        environment = {**os.environ, "ESCOBA_ENGINE": build}
        self.process = subprocess.Popen(
            [sys.executable, str(root / "benchmarks" / "engine.py"), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environment,
            cwd=root,
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
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout (e.g. `git archive main` with its compiled build) whose two builds "
        "take turns with this one's, for a before/after comparison in the same run",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"load average {load:.2f}, best of {args.repeat} x {args.seconds:g} s")  # fmt: skip
    workers = {}
    checkouts = [("", ROOT)] + ([("before ", args.before.resolve())] if args.before else [])
    for label, root in checkouts:
        for build in BUILDS:
            name = f"{label}{build}"
            try:
                workers[name] = Worker(build, root)
            except (RuntimeError, ValueError) as error:
                print(f"  {name} build: not available ({error}); run `make engine-build`")
                continue
            print(f"  {name} build: {workers[name].hello['reason']}")
    for name, players in CONFIGURATIONS:
        for worker_process in workers.values():
            worker_process.ask(do="play", ruleset=name, players=players, seed=10**6,
                               seconds=args.warmup)  # fmt: skip
    lines = []
    engine_workers = {build: w for build, w in workers.items() if w.hello.get("play_random")}
    for name, players in CONFIGURATIONS:
        rates, play_rates, log_costs = measure(workers, name, players, args, in_engine=False)
        lines.append(f"{name} {players}p: {_rates(rates)}")
        if set(BUILDS) <= set(workers):
            loop = workers["python"].ask(do="loop", ruleset=name, players=players, seed=10**6,
                                         seconds=args.seconds)["loop_us"]  # fmt: skip
            lines.append("  " + _ceiling(rates, play_rates, log_costs, loop))
        rates, play_rates, _ = measure(engine_workers, name, players, args, in_engine=True)
        lines.append(f"  the engine's own loop (play_random): {_rates(rates)}; "
                     f"the log aside: {_rates(play_rates)}")  # fmt: skip
    costs = {build: worker_process.ask(do="search", repeat=max(3, args.repeat // 2))
             for build, worker_process in workers.items()}  # fmt: skip
    for cost in SEARCH_COSTS:
        ran = [build for build in workers if cost in costs[build]]
        parts = [f"{build} {costs[build][cost]:.2f} µs" for build in ran]
        ratio = ""
        if all(cost in costs.get(build, {}) for build in BUILDS):
            ratio = f", {costs['python'][cost] / costs['compiled'][cost]:.1f}×"
        lines.append(f"{cost}: {', '.join(parts)}{ratio}")
    for worker_process in workers.values():
        worker_process.close()
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {end_load:.2f} at the end")
    for line in lines:
        print(line)


def measure(
    workers: dict[str, Worker], name: str, players: int, args: argparse.Namespace, in_engine: bool
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[float]]]:
    """Rounds/s of every run, with and without the log, and the log's µs a round, by build: the
    builds take turns run by run, and each build's figures are printed as they stand."""
    rates: dict[str, list[float]] = {build: [] for build in workers}
    play_rates: dict[str, list[float]] = {build: [] for build in workers}
    log_costs: dict[str, list[float]] = {build: [] for build in workers}
    best_games: dict[str, float] = {build: 0.0 for build in workers}
    for run in range(args.repeat):
        for build, worker_process in workers.items():
            answer = worker_process.ask(do="play", ruleset=name, players=players,
                                        seed=run * 10**5, seconds=args.seconds,
                                        in_engine=in_engine)  # fmt: skip
            rates[build].append(answer["rounds"] / answer["cpu"])
            play_rates[build].append(answer["rounds"] / (answer["cpu"] - answer["log_cpu"]))
            log_costs[build].append(answer["log_cpu"] / answer["rounds"] * 1e6)
            best_games[build] = max(best_games[build], answer["games"] / answer["cpu"])
    how = ", play_random" if in_engine else ""
    for build in workers:
        best = max(rates[build])
        print(f"  {name} {players}p{how} {build}: median run {median(rates[build]):,.0f} "
              f"rounds/s, best {best:,.0f}, {best_games[build]:,.0f} games/s; "
              f"the log aside, best {max(play_rates[build]):,.0f} rounds/s; "
              f"the log {min(log_costs[build]):.1f} µs a round")  # fmt: skip
    return rates, play_rates, log_costs


def _rates(rates: dict[str, list[float]]) -> str:
    """Each build's best rate, and the ratio when both builds ran."""
    parts = ", ".join(f"{build} {max(rates[build]):.0f} rounds/s" for build in rates)
    return f"{parts}{_ratio(rates, max)}"


def _ceiling(
    rates: dict[str, list[float]],
    play_rates: dict[str, list[float]],
    log_costs: dict[str, list[float]],
    loop: float,
) -> str:
    """What bounds the ratio whatever the compiled engine does: this script's loop and the
    log's objects are paid in both builds, so even a compiled engine that cost nothing could
    not play faster than one round per (loop + the compiled build's log)."""
    pure = 1e6 / max(rates["python"])
    pure_play = 1e6 / max(play_rates["python"])
    log = min(log_costs["compiled"])
    alone = ", ".join(f"{build} {max(play_rates[build]):.0f}" for build in play_rates)
    return (
        f"the log aside: {alone} rounds/s{_ratio(play_rates, max)}; per round, "
        f"this script's loop {loop:.1f} µs and the log {min(log_costs['python']):.1f} µs "
        f"(python) / {log:.1f} µs (compiled): a compiled engine that cost nothing would be at "
        f"most {pure / (loop + log):.1f}× (with the log aside {pure_play / loop:.1f}×)"
    )


def _ratio(rates: dict[str, list[float]], pick: object) -> str:
    """This checkout's compiled rate over its pure-Python rate."""
    if not set(BUILDS) <= set(rates):
        return ""
    return f", {pick(rates['compiled']) / pick(rates['python']):.1f}×"  # type: ignore[operator]


if __name__ == "__main__":
    main()
