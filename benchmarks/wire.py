"""The `escoba/1` wire format per move, before and after a change, measured in the same run:
building a move request from the engine (`game.view` + `move_request`, as the runner does), parsing
a bot's reply (`parse_move_reply`, as the caller does) and parsing a request (`parse_move_request`,
as every SDK bot does). Run from the repository root:

    .venv/bin/python -m benchmarks.wire [--baseline REV] [--repeat 7]

The baseline is the `games` package of git revision REV (default: the last commit before issue
11 replaced the hand-written JSON Schema validator with fastjsonschema), extracted to a temporary
directory and imported as `games_before`, so both versions run in one process, interleaved, on
the same positions. Reported: microseconds per operation, the best of `--repeat` runs (other
processes on the machine only ever make a run slower), and the load average.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEFORE_ISSUE_11 = "80a70d0"


def load_baseline(revision: str, directory: Path) -> tuple[ModuleType, ModuleType]:
    """The engine and wire-format modules of `revision`, as (engine, protocol)."""
    archive = subprocess.run(
        ["git", "archive", revision, "games"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    (directory / "games").rename(directory / "games_before")
    sys.path.insert(0, str(directory))
    engine = importlib.import_module("games_before.engine")
    try:
        wire = importlib.import_module("games_before.wire")
    except ImportError:
        wire = importlib.import_module("games_before.protocol")
    return engine, wire


def positions(engine: ModuleType, count: int) -> list[Any]:
    """Games paused at `count` positions of random classic play, the seat to move in each."""
    rng = random.Random(11)
    games, seed = [], 0
    while len(games) < count:
        game = engine.Game.new(engine.Ruleset.from_preset("classic"), seed)
        seed += 1
        while not game.is_over and len(games) < count:
            if rng.random() < 0.3:
                games.append(game.clone())
            game.apply(rng.choice(game.legal_moves()))
    return games


def build(wire: ModuleType, games: list[Any], lucky_cache: dict | None = None) -> list[dict]:
    """One move request per position, as the runner builds it, lucky deal included: before
    issue 11 it came from `round_lucky_deal(game)`, which the runner called once per round (hence
    the cache by seed and round); after, the view carries it."""
    lucky = getattr(wire, "round_lucky_deal", None)
    cache = {} if lucky_cache is None else lucky_cache
    bodies = []
    for game in games:
        extra = {}
        if lucky is not None:
            key = (game.seed, game.round)
            if key not in cache:
                cache[key] = lucky(game)
            extra = {"lucky_deal": cache[key]}
        bodies.append(wire.move_request(
            game.view(game.current_seat), game_id=1, timeout_ms=1000,
            seat_names=["a", "b"], latency_ms=1.5, time_bank_ms=1000, **extra,
        ))  # fmt: skip
    return bodies


def timed(work: Any, items: list[Any]) -> float:
    started = time.process_time()
    for item in items:
        work(item)
    return (time.process_time() - started) / len(items) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BEFORE_ISSUE_11, help="git revision to compare")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--positions", type=int, default=2000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import games.engine as engine_after
    import games.wire as wire_after

    with tempfile.TemporaryDirectory() as directory:
        engine_before, wire_before = load_baseline(args.baseline, Path(directory))
        versions = {
            f"before ({args.baseline})": (engine_before, wire_before),
            "after (this tree)": (engine_after, wire_after),
        }
        cases = {}
        for name, (engine, wire) in versions.items():
            games = positions(engine, args.positions)
            bodies = build(wire, games)
            replies = [random.Random(i).choice(body["legal_moves"]) for i, body in
                       enumerate(bodies)]  # fmt: skip
            cases[name] = {
                "request build (view + move_request)": (
                    lambda game, wire=wire, cache={}: build(wire, [game], cache),
                    games,
                ),
                "reply parse (parse_move_reply)": (wire.parse_move_reply, replies),
                "request parse (parse_move_request)": (wire.parse_move_request, bodies),
            }
        best: dict[tuple[str, str], float] = {}
        for _ in range(args.repeat):
            for name, works in cases.items():
                for label, (work, items) in works.items():
                    figure = timed(work, items)
                    best[name, label] = min(best.get((name, label), figure), figure)
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}, "
          f"{args.positions} positions, best of {args.repeat}, CPU us per operation")  # fmt: skip
    for label in cases[next(iter(cases))]:
        row = "  ".join(f"{name}: {best[name, label]:7.1f}" for name in cases)
        print(f"{label:38} {row}")


if __name__ == "__main__":
    main()
