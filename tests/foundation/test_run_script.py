"""``make run``'s supervisor (scripts/run.py), started for real and stopped with Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scripts import run
from scripts.private_redis import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_steps_start_everything_in_order():
    assert run.STEPS == [
        run.prepare_database,
        run.ensure_admin,
        run.start_redis,
        run.start_worker,
        run.start_beat,
        run.start_web,
        run.start_demo_league,
    ]


def children_of(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_run_starts_the_service_and_stops_every_process_on_ctrl_c(tmp_path):
    port = free_port()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
    }
    environment |= {"ESCOBA_DATA_DIR": str(tmp_path), "ESCOBA_PORT": str(port)}
    log_path = tmp_path / "run.out"
    with open(log_path, "wb") as log:
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "scripts.run"],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 120
        while "press Ctrl-C" not in log_path.read_text():
            assert supervisor.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.3)
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

        children = children_of(supervisor.pid)
        # redis-server, worker, beat, web and one process per example bot
        assert len(children) == 4 + len(run.DEMO_BOTS)
        supervisor.send_signal(signal.SIGINT)
        assert supervisor.wait(60) == 0
    finally:
        if supervisor.poll() is None:  # a failed assertion: stop it the clean way first
            supervisor.send_signal(signal.SIGINT)
            try:
                supervisor.wait(60)
            except subprocess.TimeoutExpired:
                supervisor.kill()
                supervisor.wait()
    assert "[escoba] stopped" in log_path.read_text()
    assert not [pid for pid in children if alive(pid)]
