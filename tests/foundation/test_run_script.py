"""``make run``'s supervisor (scripts/run.py), started for real and stopped with Ctrl-C.

It starts Redis, the database and the example bots (registered at their new ports) before the
worker, restarts a child that dies, and stops the worker before the bots, so that a Ctrl-C in the
middle of the demo league, and the next start, charge no bot with a fault.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scripts import run
from scripts.private_redis import free_port, free_ports
from tests.foundation.run_processes import ROOT, alive, children_of, run_environment


def test_steps_start_everything_in_order():
    assert run.STEPS == [
        run.start_redis,
        run.prepare_database,
        run.ensure_admin,
        run.start_example_bots,
        run.start_worker,
        run.start_beat,
        run.start_web,
        run.start_demo_league,
    ]


ROLES = {
    "redis": "redis-server",
    "worker": " worker ",
    "beat": " beat ",
    "web": "uvicorn config.asgi",
    "bot": "bots_sdk serve",
}


def role_of(pid: int) -> str | None:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    return next((role for role, mark in ROLES.items() if mark in f" {command} "), None)


def children_by_role(pid: int) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for child in children_of(pid):
        if alive(child) and (role := role_of(child)):
            found.setdefault(role, []).append(child)
    return found


def came_back(supervisor: int, role: str, victim: int, count: int) -> bool:
    now = children_by_role(supervisor).get(role, [])
    return victim not in now and len(now) == count


def start_run(environment: dict[str, str], log_path: Path, nth: int = 1) -> subprocess.Popen:
    """Start ``python -m scripts.run``, the ``nth`` one to write to ``log_path``; return once it
    says it is running."""
    with open(log_path, "ab") as log:
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "scripts.run"],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + 120
    while log_path.read_text().count("press Ctrl-C") < nth:
        assert supervisor.poll() is None, log_path.read_text()[-5000:]
        assert time.monotonic() < deadline, log_path.read_text()[-5000:]
        time.sleep(0.3)
    return supervisor


def ctrl_c(supervisor: subprocess.Popen) -> int:
    supervisor.send_signal(signal.SIGINT)
    try:
        return supervisor.wait(90)
    except subprocess.TimeoutExpired:
        supervisor.kill()
        supervisor.wait()
        raise


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def wait_until(condition, timeout: float, what: str, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}:\n{log_path.read_text()[-5000:]}"
        time.sleep(0.3)


def healthy(port: int) -> bool:
    try:
        return get_json(f"http://127.0.0.1:{port}/api/health/")["status"] == "ok"
    except OSError:
        return False


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_run_starts_the_service_restarts_what_dies_and_stops_every_process_on_ctrl_c(tmp_path):
    port = free_port()
    log_path = tmp_path / "run.out"
    # No ladder (ESCOBA_LADDER_POOLS empty): its rated sets are not looked at here, and would
    # only keep the CPU busy while each restarted process starts (tests/ladder/test_make_run.py
    # runs make run with the ladder).
    supervisor = start_run(run_environment(tmp_path, port, ESCOBA_LADDER_POOLS=""), log_path)
    try:
        output = log_path.read_text()
        credentials = json.loads((tmp_path / "admin-credentials.json").read_text())
        assert f"admin login: admin / {credentials['password']}" in output
        assert f"http://127.0.0.1:{port}/api/docs/" in output

        health_url = f"http://127.0.0.1:{port}/api/health/"
        deadline = time.monotonic() + 30
        while True:  # the worker may need a moment more than the web server
            with urllib.request.urlopen(health_url, timeout=10) as response:
                health = json.load(response)
            if health["status"] == "ok" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert health["status"] == "ok", health
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/docs/", timeout=10) as response:
            assert response.status == 200

        leagues_url = f"http://127.0.0.1:{port}/api/leagues/"
        with urllib.request.urlopen(leagues_url, timeout=10) as response:
            leagues = json.load(response)["results"]
        assert [league["name"] for league in leagues] == ["Demo league"]
        assert leagues[0]["status"] in {"running", "finished"}
        assert leagues[0]["rated"] is False, "the demo league must not move the rankings"

        children = children_of(supervisor.pid)
        # redis-server, worker, beat, web and one process per example bot
        assert len(children) == 4 + len(run.DEMO_BOTS)

        # Any child that dies comes back, and says so; the rest of the service stays up.
        for role in ("worker", "web", "redis", "bot"):
            count = len(children_by_role(supervisor.pid)[role])
            victim = children_by_role(supervisor.pid)[role][0]
            os.kill(victim, signal.SIGKILL)
            wait_until(
                lambda r=role, v=victim, n=count: came_back(supervisor.pid, r, v, n),
                60, f"the {role} to come back", log_path,
            )  # fmt: skip
            name = "bot-[a-z0-9]+" if role == "bot" else role
            said = rf"\[escoba\] {name} exited with code -9(; see \S+)?; restarting it in \d+ s"
            assert re.search(said, log_path.read_text()), log_path.read_text()[-2000:]
            wait_until(lambda: healthy(port), 60, f"health after the {role} restart", log_path)
        assert log_path.read_text().count(" restarted (pid ") == 4
        assert len(children_of(supervisor.pid)) == 4 + len(run.DEMO_BOTS)
        children = children_of(supervisor.pid)
        assert ctrl_c(supervisor) == 0
    finally:
        if supervisor.poll() is None:  # a failed assertion: stop it the clean way first
            ctrl_c(supervisor)
    assert "[escoba] stopped" in log_path.read_text()
    assert not [pid for pid in children if alive(pid)]
    stops = [line for line in log_path.read_text().splitlines() if "] stopping " in line]
    names = [line.rsplit(" ", 1)[-1] for line in stops]
    assert names[:3] == ["web", "beat", "worker"] and names[-1] == "redis", names
    assert all(name.startswith("bot-") for name in names[3:-1]), names


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_ctrl_c_in_the_middle_of_the_demo_league_stops_everything_and_a_new_start_charges_no_bot(
    tmp_path,
):
    """Finding 1 of issue 10, end to end: the games the stop cut short are played again after
    the next start, against the bots' new ports, and none is a forfeit or has a fault.

    The first run is ``make run | tee log`` stopped with Ctrl-C: the signal reaches tee too,
    which may exit before the supervisor says "stopping ...". A message that cannot be written
    must not leave the bots, the worker and the web server running, nor cut the worker's
    hand-back of its matches short."""
    # One duplicate set a pairing (72 games, not make run's 144): the games in play at the stop
    # are what is looked at, and when the first game ends the search bot's (the longest) are
    # still in play; the league then takes half the time to finish. No ladder: its sets would
    # only compete with the demo league's games for the worker and the CPU.
    environment = run_environment(
        tmp_path, free_port(), ESCOBA_DEMO_THINK_MS="100", ESCOBA_THROTTLE_ANON="100000/minute",
        ESCOBA_DEMO_GAMES_PER_PAIRING="2", ESCOBA_LADDER_POOLS="",
    )  # fmt: skip
    log_path = tmp_path / "run.out"
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "scripts.run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{environment['ESCOBA_PORT']}"
    children: set[int] = set()
    try:
        with open(log_path, "ab") as log:  # what the reader read, shown by a failure
            deadline = time.monotonic() + 120
            for line in supervisor.stdout:
                log.write(line)
                if b"press Ctrl-C" in line or time.monotonic() > deadline:
                    break
        assert b"press Ctrl-C" in line, line
        children = children_of(supervisor.pid)
        assert len(children) == 4 + len(run.DEMO_BOTS)
        league = get_json(f"{base}/api/leagues/")["results"][0]

        def progress() -> dict:
            return get_json(f"{base}/api/leagues/{league['id']}/")["progress"]

        wait_until(lambda: progress()["done"] > 0, 180, "the first finished game", log_path)
        midway = progress()
        assert midway["done"] < midway["total"], midway
        supervisor.stdout.close()  # the reader is gone: every later write is a broken pipe
        assert ctrl_c(supervisor) == 0
        assert not [pid for pid in children if alive(pid)]
        worker_log = (tmp_path / "logs" / "worker.log").read_text()
        assert "released with" in worker_log, worker_log[-3000:]

        environment["ESCOBA_PORT"] = str(free_port())
        # The games to replay need no thinking to be in play when stopped any more: full speed.
        environment["ESCOBA_DEMO_THINK_MS"] = "0"
        base = f"http://127.0.0.1:{environment['ESCOBA_PORT']}"
        supervisor = start_run(environment, log_path, nth=2)
        wait_until(
            lambda: get_json(f"{base}/api/leagues/{league['id']}/")["status"] == "finished",
            300, "the first demo league to finish", log_path,
        )  # fmt: skip
        games, url = [], f"{base}/api/games/?league={league['id']}"
        while url:
            page = get_json(url)
            games += page["results"]
            url = page["next"]
        assert len(games) == midway["total"]
        assert {game["status"] for game in games} == {"finished"}
        # What a stop or a restart would cause: calls to bots that were gone, and the forfeits
        # they lead to. (A slow answer on a loaded machine is the bot's own timeout, and stays
        # charged: the search example, thinking hard, may forfeit on timeouts.)
        connect = [(g["id"], f) for g in games for f in g["faults"] if f["kind"] == "connect"]
        assert not connect, connect[:5]
        forfeits = [g for g in games if g["result"]["forfeit_seat"] is not None]
        assert {f["kind"] for g in forfeits for f in g["faults"]} <= {"timeout"}, forfeits[:3]
        leagues = get_json(f"{base}/api/leagues/")["results"]
        assert [item["id"] for item in leagues] == [league["id"]], "a second demo league began"
        assert ctrl_c(supervisor) == 0
    finally:
        if supervisor.poll() is None:  # a failed assertion: stop it the clean way first
            ctrl_c(supervisor)
        for pid in children:  # what a failure left behind, no longer the supervisor's
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_demo_search_bot_is_charged_its_thinking_once(monkeypatch):
    """The demo bots think before each move; the search example counts its budget from the
    request's arrival, so the thinking is already in it. Taking it off the time bank as well
    would charge it twice and leave the search a sliver of its time."""
    from bots_sdk import BotState
    from bots_sdk.examples import search
    from games.engine import Game, Ruleset
    from games.wire import move_request

    game = Game.new(Ruleset.from_preset("classic"), seed=8)
    body = move_request(
        game.view(game.current_seat),
        game_id="g",
        timeout_ms=1000,
        seat_names=["a", "b"],
        latency_ms=None,
        time_bank_ms=1000,
    )
    state = BotState.from_request(body)
    deadlines: list[float] = []

    def fake_search(searched, deadline):
        deadlines.append(deadline)
        return searched.legal_moves[0], []

    monkeypatch.setattr(search, "search", fake_search)
    monkeypatch.setenv("ESCOBA_DEMO_THINK_MS", "50")
    run.demo_search(state)
    assert deadlines == [state.received_at + search.budget_seconds(state)]


def test_the_example_bots_are_given_different_ports():
    # Drawn one at a time, a port whose probe had closed could come back for a second bot before
    # the first had bound it: both were then told the same port (seen once in CI).
    for _ in range(50):
        ports = free_ports(9)
        assert len(set(ports)) == 9 and all(1024 < port < 65536 for port in ports)
