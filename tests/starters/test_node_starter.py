"""The Node.js starter (starters/node/) as a bot author would use it: a strict bot that refuses
every unsigned call registers with the secret its author gives, passes the arena's protocol
check and plays league games against an example bot, all over real HTTP on loopback."""

import base64
import os
import re
import secrets
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots_sdk import serve_in_thread
from bots_sdk.examples import greedy
from tournaments import bot_messages
from tournaments.models import Bot, Game, Seat
from tournaments.services.bots import bot_check

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.fixture
def node_bot(tmp_path) -> Iterator[tuple[str, str]]:
    """(url, secret) of the starter, run by node with its own secret."""
    if NODE is None:
        pytest.skip("node is not installed, so the Node.js starter cannot run (apt nodejs)")
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    env = {**os.environ, "PORT": "0", "HOST": "127.0.0.1", "ESCOBA_BOT_SECRET": secret}
    process = subprocess.Popen(
        [NODE, str(ROOT / "starters" / "node" / "bot.js")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+/)", line)
        assert match, f"the starter did not start: {line}{process.stdout.read()}"
        yield match.group(1), secret
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(autouse=True)
def _bot_settings(settings) -> None:
    settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS = True
    settings.ESCOBA_BOT_VERIFY_TIMEOUT_MS = 3000
    settings.ESCOBA_BOT_CHECK_TIMEOUT_MS = 3000


def test_the_node_starter_is_strict(node_bot):
    url, _ = node_bot
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=5)
    assert refused.value.code == 401


def test_without_its_secret_the_strict_bot_cannot_register_and_is_told_why(user_client, node_bot):
    url, _ = node_bot
    response = user_client.post("/api/bots/", {"name": "node", "url": url}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["url"] == [bot_messages.UNSIGNED_401.format(url=url)]


def test_a_strict_node_bot_registers_passes_the_check_and_plays(user_client, node_bot):
    url, secret = node_bot
    created = user_client.post(
        "/api/bots/", {"name": "node", "url": url, "secret": secret}, format="json"
    )
    assert created.status_code == 201, created.json()
    assert created.json()["protocol_author"] == "Escoba Arena starters"
    node = Bot.objects.get(name="node")

    check = bot_check(bot=node)
    assert check.passed, check.report
    assert check.report["results"][-1] == {
        **check.report["results"][-1],
        "name": "signature",
        "status": "pass",
    }

    with serve_in_thread(greedy.choose, name="greedy") as example:
        registered = user_client.post(
            "/api/bots/", {"name": "greedy", "url": example.url}, format="json"
        )
        assert registered.status_code == 201
        league = user_client.post(
            "/api/leagues/",
            {
                "name": "node vs greedy",
                "bots": [node.pk, registered.json()["id"]],
                "games_per_pairing": 2,
            },
            format="json",
        )
        assert league.status_code == 201, league.json()
        league_id = league.json()["id"]
        assert user_client.post(f"/api/leagues/{league_id}/start/").status_code == 202

    games = Game.objects.filter(league_id=league_id)
    assert games.count() == 2
    assert all(game.status == "finished" for game in games)
    seats = Seat.objects.filter(game__league_id=league_id, bot=node)
    assert seats.count() == 2
    assert all(seat.moves > 0 and seat.faults == 0 for seat in seats)
    assert user_client.get(f"/api/leagues/{league_id}/").json()["status"] == "finished"
