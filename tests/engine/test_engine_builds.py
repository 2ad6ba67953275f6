"""The two builds of the engine: which one a process runs, and that both write the same logs.

`make test` runs this whole directory twice: on the compiled build (when a C compiler made one)
and with ``ESCOBA_ENGINE=python``. The comparison test below plays the same seeded games in one
subprocess per build and compares the JSON text of their logs byte for byte.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import games.engine as engine
from games.engine import _build

ROOT = Path(__file__).resolve().parents[2]
ENGINE_MODULES = ("moves", "captures", "scoring", "state", "determinize")


def test_the_build_asked_for_is_the_one_loaded():
    """``ESCOBA_ENGINE`` decides, and the modules really come from that build: extension modules
    from the build directory, or the ``.py`` files beside ``_build.py``."""
    wanted = os.environ.get("ESCOBA_ENGINE", "auto")
    expected = {"python": "python", "compiled": "compiled"}.get(wanted)
    if expected is None:
        expected = "compiled" if _build.build_problem() is None else "python"
    assert engine.BUILD == expected, engine.BUILD_REASON
    modules = [sys.modules[f"games.engine.{name}"] for name in ENGINE_MODULES]
    if expected == "compiled":
        for module in modules:
            assert Path(module.__file__).parent == _build.compiled_dir()
            assert module.__file__.endswith(_build.extension_suffix())
        # An extension type: no instance __dict__, methods are not Python functions.
        assert type(engine.Game.apply).__name__ != "function"
    else:
        for module in modules:
            assert Path(module.__file__) == _build.HERE / f"{module.__name__.rsplit('.')[-1]}.py"
        assert type(engine.Game.apply).__name__ == "function"


def test_python_is_chosen_when_asked_or_when_the_build_is_missing_or_stale(monkeypatch, tmp_path):
    monkeypatch.setattr(_build, "compiled_dir", lambda: tmp_path)
    path: list[str] = []
    monkeypatch.setenv("ESCOBA_ENGINE", "auto")
    build, why = _build.select("games.engine", path)
    assert (build, path) == ("python", []) and "no compiled build" in why
    (tmp_path / _build.STAMP).write_text("an older digest\n")
    build, why = _build.select("games.engine", path)
    assert build == "python" and "older than the engine sources" in why
    monkeypatch.setenv("ESCOBA_ENGINE", "compiled")
    with pytest.raises(ImportError, match="older than the engine sources"):
        _build.select("games.engine", path)
    monkeypatch.setenv("ESCOBA_ENGINE", "fast")
    with pytest.raises(ImportError, match="must be one of auto, python, compiled"):
        _build.select("games.engine", path)


def test_a_fresh_build_goes_first_on_the_package_path(monkeypatch, tmp_path):
    monkeypatch.setattr(_build, "compiled_dir", lambda: tmp_path)
    (tmp_path / _build.STAMP).write_text(_build.source_digest() + "\n")
    for name in _build.COMPILED:
        (tmp_path / f"{name}{_build.extension_suffix()}").write_bytes(b"")
    path = ["/somewhere/games/engine"]
    monkeypatch.setenv("ESCOBA_ENGINE", "auto")
    assert _build.select("games.engine", path)[0] == "compiled"
    assert path == [str(tmp_path), "/somewhere/games/engine"]
    # Under another package name the same files would clash with the real modules' C globals.
    monkeypatch.setenv("ESCOBA_ENGINE", "compiled")
    other: list[str] = []
    assert _build.select("bots_sdk.engine", other)[0] == "python" and other == []
    monkeypatch.setenv("ESCOBA_ENGINE", "python")
    assert _build.select("games.engine", other) == ("python", "ESCOBA_ENGINE=python")


# Plays seeded games on every preset and table size (random legal play, seeded too), forfeits
# some, continues a few determinized samples, and prints each log as JSON text.
_PLAY = """
import json, random, sys
from games.engine import BUILD, PRESETS, Game, Ruleset, Determinizer
print(BUILD)
configurations = []
for name in PRESETS:
    for players in (2, 3, 4):
        overrides = {"players": players}
        if name == "classic" and players == 4:
            overrides["teams"] = True
        configurations.append(Ruleset.from_preset(name, overrides))
configurations.append(Ruleset.from_preset("classic", {"target": 5, "tie": "shared"}))
for number in range(int(sys.argv[1])):
    ruleset = configurations[number % len(configurations)]
    game = Game.new(ruleset, number)
    chooser = random.Random(number)
    while not game.is_over:
        if number % 7 == 3 and game.round == 2:
            game.forfeit(game.current_seat, "faults")
            break
        seat = game.current_seat
        if number % 5 == 0 and chooser.random() < 0.05:
            view = game.view(seat)
            sample = Determinizer(view).sample(random.Random(number))
            while not sample.is_over and sample.round == view.round:
                sample.apply(chooser.choice(sample.legal_moves()))
            print(json.dumps(sample.log()))
        game.apply(chooser.choice(game.legal_moves()))
    print(json.dumps(game.log()))
    if number % 4 == 1:  # the engine's own random play, to the end of the game
        game = Game.new(ruleset, number)
        game.play_random(random.Random(number), to_game_end=True)
        print(json.dumps(game.log()))
"""


def _logs(build: str, games: int) -> list[str]:
    environment = {**os.environ, "ESCOBA_ENGINE": build, "PYTHONHASHSEED": "0"}
    process = subprocess.run(
        [sys.executable, "-c", _PLAY, str(games)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert lines[0] == build
    return lines[1:]


def test_both_builds_write_the_same_logs_byte_for_byte():
    """300 seeded games over every preset and table size, some forfeited, plus rounds played
    on from determinized samples and games played by ``play_random``: the compiled build's logs
    are the pure build's, to the byte."""
    if _build.build_problem() is not None and os.environ.get("ESCOBA_ENGINE") != "compiled":
        pytest.skip(f"no compiled build to compare: {_build.build_problem()}")
    python_logs = _logs("python", 300)
    compiled_logs = _logs("compiled", 300)
    assert len(python_logs) > 300
    for python_log, compiled_log in zip(python_logs, compiled_logs, strict=True):
        assert compiled_log == python_log
    assert {json.loads(log)["ruleset"]["name"] for log in python_logs} == set(engine.PRESETS)


# Make `import cython` fail, as on a machine without Cython, then play through the pure build.
_WITHOUT_CYTHON = """
import sys


class NoCython:
    def find_spec(self, name, path=None, target=None):
        if name == "cython" or name.startswith("Cython"):
            raise ImportError(f"no module named {name!r} (hidden by the test)")
        return None


sys.meta_path.insert(0, NoCython())
sys.modules.pop("cython", None)
import json
import random

from games.engine import BUILD, Game, Ruleset

game = Game.new(Ruleset.from_preset("classic"), 11)
chooser = random.Random(11)
while not game.is_over:
    game.apply(chooser.choice(game.legal_moves()))
print(BUILD, sys.modules["games.engine.state"].cython.__name__)
print(json.dumps(game.log()))
game = Game.new(Ruleset.from_preset("classic"), 12)
game.play_random(random.Random(12), to_game_end=True)
print(json.dumps(game.log()))
"""


def test_the_pure_build_runs_where_cython_is_not_installed():
    """The engine's source names Cython's decorators (``@cython.no_gc``) and asks whether it
    is compiled (``cython.compiled``); without Cython they come from ``games.engine._nocython``
    and change nothing: the same games, by ``apply`` and by ``play_random``, the same logs."""
    environment = {**os.environ, "ESCOBA_ENGINE": "python", "PYTHONHASHSEED": "0"}
    process = subprocess.run(
        [sys.executable, "-c", _WITHOUT_CYTHON],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    first, log, played_random = process.stdout.splitlines()
    assert first == "python games.engine._nocython"
    game = engine.Game.new(engine.Ruleset.from_preset("classic"), 11)
    chooser = random.Random(11)
    while not game.is_over:
        game.apply(chooser.choice(game.legal_moves()))
    assert log == json.dumps(game.log())
    game = engine.Game.new(engine.Ruleset.from_preset("classic"), 12)
    game.play_random(random.Random(12), to_game_end=True)
    assert played_random == json.dumps(game.log())
