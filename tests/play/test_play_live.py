"""The person's page and spectators follow a person's game through the live streams under
uvicorn (web/game_streams.py, web/page_streams.py): the ``play`` topic says the page changed,
with no polling; the game's own stream shows spectators the plays, never a hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model

from tests.live.servers import AsgiServer, Stream
from tournaments.services import play

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture
def server(transactional_db, redis_url, settings, tmp_path) -> Iterator[AsgiServer]:
    settings.REDIS_URL = redis_url
    server = AsgiServer(redis_url, tmp_path / "uvicorn.log", ESCOBA_LIVE_HEARTBEAT_S="1")
    yield server
    server.stop()


def test_the_page_and_spectators_follow_a_person_game_live(server, make_bot):
    person = get_user_model().objects.create_user(username="watched")
    bot = make_bot("greedy")
    person_game = play.play_create(person=person, opponent=bot.pk)
    page = Stream(server.port, f"/live/play/{person_game.pk}/")
    assert page.response.status == 200
    first = page.next()
    assert first["event"] == "changed"
    spectator = Stream(server.port, f"/live/games/{person_game.game_id}/")
    snapshot = spectator.next()
    assert snapshot["event"] == "snapshot"
    log = snapshot["data"]["log"]
    assert "seed" not in log
    assert all(card is None for r in log["rounds"] for deal in r["deals"] for hand in deal
               for card in hand)  # fmt: skip
    state = play.play_read(person_game_id=person_game.pk, person=person)
    assert state.status == "your_turn"
    move = state.request["legal_moves"][0]
    play.play_move(person_game_id=person_game.pk, person=person, **move)
    changed = page.next()
    assert changed["event"] == "changed"
    assert changed["data"]["version"] != first["data"]["version"]
    event = spectator.next()
    assert event["event"] == "play" and event["data"]["play"]["card"] == move["card"]
    assert "hand" not in str(event["data"])
    page.close()
    spectator.close()
