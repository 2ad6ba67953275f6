"""`benchmarks/engine.py` (figures in docs/benchmarks.md) keeps running, the part of it that
bounds the builds' ratio measures the script's loop alone, not the engine, and the engine's own
loop plays the same games as the script's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from benchmarks import engine as bench
from games.engine import Ruleset, _build

ROOT = Path(__file__).resolve().parents[2]


def test_the_loop_alone_costs_a_small_part_of_playing_the_same_games():
    ruleset = Ruleset.from_preset("classic")
    rounds, _, cpu, log_cpu = bench.play(ruleset, 10**6, 0.2)
    playing = (cpu - log_cpu) / rounds * 1e6
    loop = bench.loop_cost(ruleset, 10**6, 0.2)
    assert 0 < loop < playing / 3, (loop, playing)
    assert 0 < log_cpu < cpu


def test_the_engine_plays_the_same_games_as_the_loop():
    ruleset = Ruleset.from_preset("classic")
    assert bench.play(ruleset, 7, 0.0)[:2] == bench.play(ruleset, 7, 0.0, in_engine=True)[:2]


def test_a_replay_runs_every_recorded_turn_and_then_is_over():
    replay = bench._Replay([0, 0, 0])
    replay.legal_moves = iter([[0, 0], [0], [0, 0, 0]]).__next__
    replay.apply = replay.pop
    turns = []
    while not replay.is_over:
        moves = replay.legal_moves()
        turns.append(len(moves))
        replay.apply(moves[-1])
    assert turns == [2, 1, 3]


def test_the_benchmark_prints_both_builds_the_ratio_and_its_bound():
    command = [sys.executable, "benchmarks/engine.py", "--seconds", "0.02", "--repeat", "1"]
    done = subprocess.run(
        [*command, "--warmup", "0.01"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(re.fullmatch(r"classic 2p: python \d+ rounds/s.*", line) for line in lines)
    assert any(line.startswith("clone+apply: python ") for line in lines)
    assert any(line.startswith("rollout by play_random: python ") for line in lines)
    engine_loop = [line for line in lines if line.startswith("  the engine's own loop ")]
    assert len(engine_loop) == len(bench.CONFIGURATIONS), done.stdout
    assert re.match(r"  the engine's own loop \(play_random\): python \d+ rounds/s", engine_loop[0])
    if _build.build_problem() is None:
        bound = [line for line in lines if "a compiled engine that cost nothing" in line]
        assert len(bound) == len(bench.CONFIGURATIONS), done.stdout
        figures = re.search(r"at most (\d+\.\d)× \(with the log aside (\d+\.\d)×\)", bound[0])
        assert figures is not None and 0 < float(figures[1]) < float(figures[2]), bound[0]
