"""A person's game with real parts: the bots' turns played by a real Celery worker (games
queue) against an example bot served over loopback HTTP, the live feed in a real Redis, and a
worker killed in the middle of the game."""

from __future__ import annotations

import time

import orjson
import pytest
import redis
from django.contrib.auth import get_user_model

from tests.clients import client_for
from tests.play.helpers import play_out
from tournaments.live_feed import live_game_key
from tournaments.models import Game, PersonGame

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def wait_for(client, play_id: int, status: str, limit_s: float = 120) -> dict:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        state = client.get(f"/api/play/{play_id}/").json()
        if state["status"] == status:
            return state
        time.sleep(0.2)
    raise AssertionError(f"not {status} in time: {state}")


def test_a_worker_plays_the_bots_and_a_restart_loses_nothing(
    celery_worker_process, make_bot, redis_url, settings, short_games
):
    settings.REDIS_URL = redis_url
    # A game to 1 point, over with its first round that is not tied: 3 moves before the worker
    # dies and all the others after it came back, to the end, the stored game and its feed.
    short_games(target=1)
    # The bots' turn the killed worker was playing is sent again once no answer came for this
    # long (read by this process's reads); 1 s beyond the bot's three timeouts still waits past
    # any call the dead worker could have been making.
    settings.ESCOBA_PLAY_STALL_S = 1
    person = get_user_model().objects.create_user(username="player")
    client = client_for(person)
    bot = make_bot("random")
    made = client.post("/api/play/", {"opponent": bot.id, "ruleset": "classic", "players": 2})
    assert made.status_code == 201, made.json()
    play_id = made.json()["id"]
    # A few moves, then the worker dies (SIGKILL) and comes back: the stored answers are the
    # game, so the next move goes on where it was.
    for _ in range(3):
        state = wait_for(client, play_id, "your_turn")
        moved = client.post(f"/api/play/{play_id}/move/", state["request"]["legal_moves"][0])
        assert moved.status_code == 200, moved.json()
    celery_worker_process.kill()
    before = len(PersonGame.objects.get(pk=play_id).answers)
    celery_worker_process.restart()
    state = play_out(client, play_id, limit_s=400)
    assert state["status"] == "finished"
    person_game = PersonGame.objects.get(pk=play_id)
    assert len(person_game.answers) > before
    game = Game.objects.get(pk=person_game.game_id)
    assert game.status == Game.Status.FINISHED and game.log.document["result"]
    # Spectators' feed: every play in order, then the end; moves only, never a hand.
    client_redis = redis.Redis.from_url(redis_url)
    entries = [orjson.loads(raw) for raw in client_redis.lrange(live_game_key(game.id), 0, -1)]
    client_redis.close()
    assert entries[0]["kind"] == "start" and entries[-1]["kind"] == "end"
    plays = [entry for entry in entries if entry["kind"] == "play"]
    assert [entry["n"] for entry in entries] == list(range(len(entries)))
    assert len(plays) == game.moves
    assert not any("hand" in entry for entry in entries)
