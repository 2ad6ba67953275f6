"""A person's seat through the API: a whole game of legal moves, privacy, illegal moves, the
clock, resuming, the table of 4, never rated (tournaments/services/play.py)."""

from __future__ import annotations

import datetime
import time

import orjson
import pytest
import redis
from django.contrib.auth import get_user_model
from django.db.models import F

from tests.clients import client_for
from tests.play.helpers import play_out
from tournaments.live_feed import live_game_key
from tournaments.models import Game, GameLog, HeadToHead, PersonGame, RatedSet, Seat
from tournaments.services import play

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="person", password="x" * 20)


def test_a_person_plays_a_whole_game_of_legal_moves(person, make_bot, short_games):
    # Exactly two rounds (no target reached at 21 points): the game goes from one round's deal
    # to the next, and ends, as a longer one does.
    short_games(max_rounds=2)
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id, "ruleset": "classic", "players": 2})
    assert made.status_code == 201, made.json()
    body = made.json()
    assert {"id", "game", "status", "request", "clock_ms"} <= set(body)
    state = play_out(client, body["id"])
    game = Game.objects.get(pk=body["game"])
    assert state["status"] == "finished" and state["game"] == game.id
    assert game.status == Game.Status.FINISHED and not game.rated
    assert state["replay_url"] == f"/games/{game.id}/"
    log = GameLog.objects.get(game=game)
    assert log.document["result"]["winner"] in (0, 1, None)
    # Two rounds, unless the bot lost by its faults (a machine too loaded to answer in time).
    assert len(log.document["rounds"]) == 2 or log.document["result"]["reason"] == "forfeit"
    # The bot's seat is stored like any other; the person has none, and nothing is rated.
    seat = Seat.objects.get(game=game)
    assert seat.bot == bot and seat.moves > 0 and seat.finished_at is not None
    assert game.seating[state["seat"]] is None
    assert not HeadToHead.objects.exists() and not RatedSet.objects.exists()
    # The bot's requests never held the person's cards: each holds cards dealt to its seat.
    person_seat = state["seat"]
    rounds = log.document["rounds"]
    bot_calls = [call for call in log.diagnostics if call["seat"] != person_seat]
    assert bot_calls
    for call in bot_calls:
        deals = rounds[call["round"] - 1]["deals"]
        bots = {card for deal in deals for card in deal[call["seat"]]}
        persons = {card for deal in deals for card in deal[person_seat]}
        hand = set(call["request"]["you"]["hand"])
        assert hand <= bots and not hand & persons


def test_only_the_person_may_read_or_move(person, make_bot, api_client):
    bot = make_bot("greedy")
    made = client_for(person).post("/api/play/", {"opponent": bot.id}).json()
    stranger = get_user_model().objects.create_user(username="stranger")
    for client in (client_for(stranger), client_for(bot.owner), api_client):
        assert client.get(f"/api/play/{made['id']}/").status_code == 404
        moved = client.post(f"/api/play/{made['id']}/move/", {"card": "1o"}, format="json")
        assert moved.status_code == 404
        assert moved.json()["code"] == "not_found"
    # The game's own pages say nothing of a hand while it is played.
    detail = api_client.get(f"/api/games/{made['game']}/")
    assert "hand" not in detail.content.decode()
    assert api_client.get(f"/api/games/{made['game']}/log/").status_code in (404, 409)
    owner = client_for(bot.owner)
    for part in ("log", "diagnostics"):
        sealed = owner.get(f"/api/games/{made['game']}/{part}/")
        assert sealed.status_code in (404, 409), sealed.content  # in play: nothing to read


def test_an_illegal_move_loses_nothing_and_a_bots_turn_is_409(person, make_bot):
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    state = client.get(f"/api/play/{made['id']}/").json()
    assert state["status"] == "your_turn"
    hand = state["request"]["you"]["hand"]
    table = state["request"]["table"]
    not_mine = next(card for card in ("1o", "2o", "3o", "4o", "5o", "6o") if card not in hand)
    answer = client.post(f"/api/play/{made['id']}/move/", {"card": not_mine}, format="json")
    assert answer.status_code == 400
    assert answer.json()["code"] == "illegal_move"
    assert answer.json()["detail"] == play.ERROR_ILLEGAL
    bad = client.post(f"/api/play/{made['id']}/move/", {"card": "zz"}, format="json")
    assert bad.status_code == 400 and bad.json()["detail"]
    again = client.get(f"/api/play/{made['id']}/").json()
    assert again["status"] == "your_turn" and again["request"]["you"]["hand"] == hand
    assert again["request"]["table"] == table
    assert again["moves"] == state["moves"]
    # Once the person moved, the bots play at once (eager tasks here) and it is theirs again;
    # a move while a bot is to move is a 409: made by hand, with the person not to move.
    PersonGame.objects.filter(pk=made["id"]).update(person_to_move=False)
    late = client.post(f"/api/play/{made['id']}/move/", state["request"]["legal_moves"][0],
                       format="json")  # fmt: skip
    assert late.status_code == 409 and late.json()["code"] == "not_your_turn"


def test_the_clock_plays_the_fallback_and_then_forfeits(person, make_bot, settings):
    settings.ESCOBA_PLAY_CLOCK_S = 1
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    timeouts = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = client.get(f"/api/play/{made['id']}/").json()
        if state["status"] == "finished":
            break
        assert state["clock_ms"] is None or state["clock_ms"] <= 1000
        # The 1 s clock runs out: it is measured from the turn's stored start, so moving that
        # back by more than a second is what waiting a second did, without the wait.
        PersonGame.objects.filter(pk=made["id"], person_to_move=True).update(
            turn_started_at=F("turn_started_at") - datetime.timedelta(seconds=1.05)
        )
        timeouts += 1
        assert play.play_clocks_enforce() in ([], [made["id"]])
    game = Game.objects.get(pk=made["game"])
    assert game.status == Game.Status.FINISHED
    kinds = {(f["seat"], f["kind"]) for f in game.log.faults}
    assert kinds == {(state["seat"], "timeout")}
    # max_faults (5) timeouts are played by the fallback move; the sixth forfeits.
    assert len(game.log.faults) == game.league.max_faults + 1
    assert game.forfeit == state["seat"] and game.reason


def test_a_move_after_the_clock_ran_out_is_refused_and_the_fallback_stays(
    person, make_bot, settings
):
    settings.ESCOBA_PLAY_CLOCK_S = 1
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    before = client.get(f"/api/play/{made['id']}/").json()
    assert before["status"] == "your_turn"
    PersonGame.objects.filter(pk=made["id"]).update(
        turn_started_at=F("turn_started_at") - datetime.timedelta(seconds=1.05)
    )
    late = client.post(f"/api/play/{made['id']}/move/", before["request"]["legal_moves"][0],
                       format="json")  # fmt: skip
    assert late.status_code == 409 and late.json()["code"] == "not_your_turn"
    # The refusal did not take the clock's fallback move back with it: the timeout and the
    # move the clock played are stored (read from the row, not through a read that would
    # judge the clock again), and the beat has nothing left to do.
    answers = PersonGame.objects.get(pk=made["id"]).answers
    assert any(answer["fault"] == "timeout" for answer in answers), answers
    assert play.play_clocks_enforce() == []


def test_a_play_lost_from_the_live_feed_is_filled_in_by_the_next(
    person, make_bot, short_games, redis_url, settings
):
    settings.REDIS_URL = redis_url
    short_games(max_rounds=1)
    bot = make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    feed = redis.Redis.from_url(redis_url)
    key = live_game_key(made["game"])
    state = client.get(f"/api/play/{made['id']}/").json()
    client.post(f"/api/play/{made['id']}/move/", state["request"]["legal_moves"][0], format="json")
    # The last play never reached the feed (a worker killed between storing the answer and
    # publishing it): the next publication brings the feed up to the stored game, in order.
    assert feed.rpop(key) is not None
    state = play_out(client, made["id"])
    entries = [orjson.loads(raw) for raw in feed.lrange(key, 0, -1)]
    feed.close()
    assert [entry["n"] for entry in entries] == list(range(len(entries)))
    assert entries[0]["kind"] == "start" and entries[-1]["kind"] == "end"
    game = Game.objects.get(pk=made["game"])
    assert len([entry for entry in entries if entry["kind"] == "play"]) == game.moves


def test_a_reload_resumes_the_game(person, make_bot, short_games):
    short_games(target=1)  # the first round that is not tied ends it
    bot = make_bot("random")
    client = client_for(person)
    made = client.post("/api/play/", {"opponent": bot.id}).json()
    first = client.get(f"/api/play/{made['id']}/").json()
    client.post(f"/api/play/{made['id']}/move/", first["request"]["legal_moves"][0], format="json")
    # A new client (a closed tab, another browser) of the same person sees the same game.
    again = client_for(person).get(f"/api/play/{made['id']}/").json()
    assert again["moves"] >= 2 and again["status"] in ("your_turn", "finished")
    assert again["request"] != first["request"]
    assert play_out(client_for(person), made["id"])["status"] == "finished"


def test_bots_that_do_not_accept_challenges_and_the_quota(person, make_bot, settings):
    shy = make_bot("greedy", accepts_challenges=False)
    client = client_for(person)
    refused = client.post("/api/play/", {"opponent": shy.id})
    assert refused.status_code == 400 and "opponent" in refused.json()["errors"]
    own = make_bot("greedy", owner=person, accepts_challenges=False)
    assert client.post("/api/play/", {"opponent": own.id}).status_code == 201
    settings.ESCOBA_PLAY_MAX_GAMES = 1
    again = client.post("/api/play/", {"opponent": own.id})
    assert again.status_code == 400
    assert again.json()["errors"]["opponent"] == [play.ERROR_TOO_MANY.format(limit=1)]
    assert client.post("/api/play/", {"opponent": 10**9}).status_code == 400
    assert client.post("/api/play/", {"opponent": own.id, "players": 3}).status_code == 400


def test_the_partnership_table(person, make_bot, short_games):
    short_games(target=1)  # the first round that is not tied ends it
    partner, left, right = make_bot("greedy"), make_bot("random"), make_bot("greedy")
    client = client_for(person)
    made = client.post("/api/play/", {"players": 4, "partner": partner.id,
                                      "opponents": [left.id, right.id]}, format="json")  # fmt: skip
    assert made.status_code == 201, made.json()
    state = play_out(client, made.json()["id"])
    game = Game.objects.get(pk=state["game"])
    seat = state["seat"]
    assert game.seating[(seat + 2) % 4] == partner.id
    assert {game.seating[(seat + 1) % 4], game.seating[(seat + 3) % 4]} == {left.id, right.id}
    assert Seat.objects.get(game=game, bot=partner).team == state["team"]
    assert game.status == Game.Status.FINISHED
