"""`python -m bots_sdk serve` as a real process, and `pip install ./games ./bots_sdk` into a
fresh virtualenv."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from bots_sdk import run_check
from games.engine._compile import compiler_command
from tests.sdk.conftest import SAMPLE_REQUEST

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_" + "Y2xpLXRlc3Qtc2VjcmV0LXZhbHVl"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_info(url: str, process: subprocess.Popen, timeout: float = 15) -> dict:
    import http.client

    deadline = time.monotonic() + timeout
    port = int(url.rsplit(":", 1)[1])
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.communicate()}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/")
            return json.loads(connection.getresponse().read())
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not answer")


def start(args: list[str], cwd: Path, python: str = sys.executable) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [python, "-m", "bots_sdk", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def ignore_sigint() -> None:
    """What a shell does for a job it starts in the background, or a script's `cmd &`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_started_with_sigint_ignored_stops_on_sigint_and_sigterm(signum):
    """Issue 39: started in the background, `serve` still stops, cleanly, on either signal."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "bots_sdk", "serve", "bots_sdk.examples.greedy:choose",
         "--port", str(port)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=ignore_sigint,
    )  # fmt: skip
    try:
        assert wait_for_info(url, process)["name"] == "greedy"
        process.send_signal(signum)
        assert process.wait(timeout=10) == 0, process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with pytest.raises(OSError):  # the port is closed
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_serve_an_example_bot():
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start(["serve", "bots_sdk.examples.greedy:choose", "--port", str(port)], ROOT)
    try:
        assert wait_for_info(url, process)["name"] == "greedy"
        report = run_check(url)
        assert report.ok, report.to_text()
    finally:
        assert stop(process) == 0
    assert f"serving greedy on {url}" in process.stderr.read()


def test_serve_my_own_bot_with_a_secret(tmp_path):
    (tmp_path / "mybot.py").write_text(
        "def choose(state):\n"
        "    return max(state.legal_moves, key=lambda move: len(move.capture))\n"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start(
        ["serve", "mybot:choose", "--port", str(port), "--name", "mine", "--secret", SECRET],
        tmp_path,
    )
    try:
        assert wait_for_info(url, process)["name"] == "mine"
        assert run_check(url, secret=SECRET).ok
        unsigned = run_check(url)
        assert not unsigned.ok
        assert "401" in unsigned.failures[0].detail
    finally:
        stop(process)


@pytest.mark.parametrize(
    "target, message",
    [
        ("bots_sdk.examples.greedy:nothing", "no function 'nothing'"),
        ("no_such_module_here:choose", "No module named"),
    ],
)
def test_serve_a_missing_bot_fails_clearly(target, message):
    result = subprocess.run(
        [sys.executable, "-m", "bots_sdk", "serve", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert message in result.stderr


INSTALLED_SMOKE = """
import importlib.util, json, sys
import bots_sdk, games, games.engine, games.wire
from bots_sdk import run_check, serve_in_thread
from bots_sdk.examples import expert
with serve_in_thread(expert.choose) as handle:
    report = run_check(handle.url)
print(json.dumps({
    "ok": report.ok,
    "report": report.to_text(),
    "django": sorted(name for name in sys.modules if name.split(".")[0] == "django"),
    "django_installed": importlib.util.find_spec("django") is not None,
    "same_move": bots_sdk.Move is games.engine.Move,
    "same_error": bots_sdk.ProtocolError is games.wire.ProtocolError,
    "games": games.__file__,
    "bots_sdk": bots_sdk.__file__,
    "engine": games.engine.BUILD,
    "engine_reason": games.engine.BUILD_REASON,
    "setup_installed": importlib.util.find_spec("games.setup") is not None,
}))
"""


@pytest.mark.slow
@pytest.mark.integration
def test_pip_install_into_a_fresh_venv(tmp_path):
    """`pip install ./games ./bots_sdk`, as the SDK README says, into a virtualenv of its own
    (no system site-packages, no Django): the SDK imports the installed `games`, and `serve`,
    `check`, `duel`, `league`, `replay` and the example bots work from there. Where a C
    compiler and Python's headers are (as here), the install compiles the engine itself: the
    checkout's own build is not copied along."""
    repo = tmp_path / "repo"
    for package in ("games", "bots_sdk"):
        shutil.copytree(
            ROOT / package,
            repo / package,
            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "_compiled"),
        )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, bin_dir = str(venv / "bin" / "python"), venv / "bin"
    # --no-compile: no byte-code written at install (Python writes its own cache on import);
    # it changes nothing checked here, and compiling numpy's 500 files takes seconds.
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-compile", "./games", "./bots_sdk"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr

    # Run from an empty directory so nothing from the repository can be imported.
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(args), cwd=work, env=env, capture_output=True, text=True, timeout=timeout
        )

    smoke = run(python, "-c", INSTALLED_SMOKE)
    assert smoke.returncode == 0, smoke.stderr
    facts = json.loads(smoke.stdout)
    assert facts["ok"], facts["report"]
    assert facts["same_move"] and facts["same_error"]
    assert facts["django"] == [] and not facts["django_installed"]
    for package in ("games", "bots_sdk"):
        installed = Path(facts[package])
        assert "site-packages" in installed.parts and not installed.parent.is_symlink()
    assert not facts["setup_installed"]
    if compiler_command() is not None:
        assert facts["engine"] == "compiled", facts["engine_reason"]
        assert "site-packages" in facts["engine_reason"]

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(bin_dir / "escoba-bot"), "serve", "bots_sdk.examples.expert:choose",
         "--port", str(port)],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert wait_for_info(url, server)["name"] == "expert"
        checked = run(str(bin_dir / "escoba-bot"), "check", url)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "result: OK" in checked.stdout
    finally:
        assert stop(server) == 0

    duel = run(
        python, "-m", "bots_sdk", "duel", "bots_sdk.examples.greedy:choose",
        "bots_sdk.examples.random:choose", "--games", "4",
    )  # fmt: skip
    assert duel.returncode == 0, duel.stderr
    assert "4 games with seats swapped" in duel.stdout

    # league (numpy comes with games, for the rating fit) and replay, installed.
    league = run(
        python, "-m", "bots_sdk", "league", "bots_sdk.examples.greedy",
        "bots_sdk.examples.random", "--sets", "1", "--json", "--quiet",
    )  # fmt: skip
    assert league.returncode == 0, league.stderr
    assert {row["bot"] for row in json.loads(league.stdout)["standings"]} == {"greedy", "random"}
    (work / "request.json").write_text(json.dumps(SAMPLE_REQUEST))
    replayed = run(
        python, "-m", "bots_sdk", "replay", "request.json", "--bot", "bots_sdk.examples.greedy"
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "(legal)" in replayed.stdout

    help_text = run(str(bin_dir / "escoba-bot"), "--help", timeout=60)
    assert "serve" in help_text.stdout


def test_the_readme_bot_passes_the_check(tmp_path):
    """The quickstart's `mybot.py` is real code: it serves and passes `check`."""
    readme = (ROOT / "bots_sdk" / "README.md").read_text()
    snippet = readme.split("```python\n# mybot.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "mybot.py").write_text(snippet)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start(["serve", "mybot:choose", "--port", str(port)], tmp_path)
    try:
        assert wait_for_info(url, process)["name"] == "mybot"
        report = run_check(url)
        assert report.ok, report.to_text()
    finally:
        stop(process)


@pytest.mark.slow
@pytest.mark.integration
def test_the_games_wheel_without_a_compiled_engine_is_pure(tmp_path):
    """`ESCOBA_ENGINE_BUILD=python` (or no C compiler) builds a wheel of the pure-Python engine
    alone: tagged for any platform, no extension module in it, and the engine's C types (the
    `.pxd` files a compiled build is checked against) and never `setup.py` as a module."""
    env = {**os.environ, "ESCOBA_ENGINE_BUILD": "python"}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
         str(tmp_path), str(ROOT / "games")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert not [name for name in names if name.endswith(".so")]
    assert "games/engine/state.pxd" in names and "games/engine/_compile.py" in names
    assert "games/setup.py" not in names
