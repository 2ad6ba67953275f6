"""A fresh ``make run`` (scripts/run.py, started for real) plays and rates the example bots on the
ladder with nobody creating a league; and the leagues list keeps to leagues."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scripts.private_redis import free_port
from tests.foundation.run_processes import stop_gently
from tournaments.models import League

ROOT = Path(__file__).resolve().parents[2]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.mark.integration
@pytest.mark.timeout(400)
def test_make_run_ranks_the_example_bots_on_the_ladder(tmp_path):
    port = free_port()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
        and not key.startswith("ESCOBA_LADDER")
    }
    environment |= {
        "ESCOBA_DATA_DIR": str(tmp_path),
        "ESCOBA_PORT": str(port),
        "ESCOBA_DEMO_THINK_MS": "0",  # the example bots at full speed: sets end in seconds
        # The demo league is only listed here: one duplicate set a pairing (the fewest) leaves
        # the worker and the CPU to the ladder sooner.
        "ESCOBA_DEMO_GAMES_PER_PAIRING": "2",
    }
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
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        ranked: list = []
        while time.monotonic() < deadline:
            assert supervisor.poll() is None, log_path.read_text()[-3000:]
            try:
                ladders = get(f"{base}/api/leagues/?kind=ladder")["results"]
                ranked = get(f"{base}/api/rankings/?pool=classic/2p")["results"]
            except OSError:
                ladders = []
            if ladders and len(ranked) >= 2:
                break
            time.sleep(2)
        assert ladders, log_path.read_text()[-3000:]
        ladder = ladders[0]
        assert ladder["kind"] == "ladder" and ladder["rated"] and ladder["status"] == "running"
        assert ladder["creator"] == "ladder"  # the arena's own account: nobody created it
        assert len(ranked) >= 2, "no example bot was rated by the ladder"
        games = get(f"{base}/api/games/?league={ladder['id']}")["results"]
        assert games and any(game["status"] == "finished" for game in games)
        # the leagues list keeps to leagues: the demo league, not the ladder
        names = [league["name"] for league in get(f"{base}/api/leagues/")["results"]]
        assert names == ["Demo league"]
        page = urllib.request.urlopen(f"{base}/ladder/", timeout=10).read().decode()
        assert "Ladder" in page and "classic/2p" in page
    finally:
        stop_gently(supervisor)


@pytest.mark.django_db
def test_the_leagues_list_filters_by_kind(api_client, user, make_bot):
    from tournaments.services.ladder import ladder_league

    ladder_league("classic/2p")
    League.objects.create(
        name="mine", creator=user, ruleset={}, pool="classic/2p", players=2, seed=1
    )
    names = [row["name"] for row in api_client.get("/api/leagues/").json()["results"]]
    assert names == ["mine"]
    ladders = api_client.get("/api/leagues/?kind=ladder").json()["results"]
    assert [row["kind"] for row in ladders] == ["ladder"]
    assert len(api_client.get("/api/leagues/?kind=all").json()["results"]) == 2
    refused = api_client.get("/api/leagues/?kind=cup")
    assert refused.status_code == 400 and "kind" in refused.json()["errors"]
