"""The referees a process keeps between the steps of people's games
(tournaments/services/play_referee.py): a game played with them is the game its stored answers
referee from the seed, and stored answers that are not an extension of what a kept referee
applied are replayed from the seed."""

from __future__ import annotations

import orjson
import pytest
from django.contrib.auth import get_user_model

from tests.clients import client_for
from tests.play.helpers import play_out
from tournaments.bot_calls.runner import GameRecord
from tournaments.models import Game, GameLog, PersonGame
from tournaments.services import play, play_referee

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.fixture
def person(transactional_db):
    return get_user_model().objects.create_user(username="person", password="x" * 20)


@pytest.fixture
def kept():
    """The process's kept referees, empty and with their counts at 0."""
    cache = play_referee.cache
    cache.clear()
    cache.hits = cache.replays = 0
    yield cache
    cache.clear()


def _json(value):
    return orjson.loads(orjson.dumps(value))


def _from_seed(person_game_id: int, answers: list | None = None):
    """The referee and calls after ``answers`` (default: the stored ones), from the seed alone."""
    person_game = PersonGame.objects.select_related("game__league").get(pk=person_game_id)
    if answers is not None:
        person_game.answers = answers
    play_referee.cache.clear()
    return play_referee.referee_after(person_game)


def _start(person, make_bot) -> tuple[object, dict]:
    client = client_for(person)
    bot = make_bot("greedy")
    made = client.post("/api/play/", {"opponent": bot.id, "ruleset": "classic", "players": 2})
    assert made.status_code == 201, made.json()
    return client, made.json()


@pytest.mark.parametrize("size", [0, 256], ids=["cold-every-step", "kept"])
def test_a_game_is_the_game_its_answers_referee_from_the_seed(
    person, make_bot, short_games, kept, settings, monkeypatch, size
):
    settings.ESCOBA_PLAY_REFEREE_CACHE = size
    short_games(max_rounds=1)
    sent = []
    ask = play._ask

    async def recorded(url, secret, body, timeout_ms):
        sent.append(_json(body))
        return await ask(url, secret, body, timeout_ms)

    monkeypatch.setattr(play, "_ask", recorded)
    client, made = _start(person, make_bot)
    served = []

    def choose(legal):
        served.append(client.get(f"/api/play/{made['id']}/").json()["request"])
        return legal[-1]

    state = play_out(client, made["id"], choose=choose)
    assert state["status"] == "finished"
    person_game = PersonGame.objects.get(pk=made["id"])
    answers = person_game.answers
    if size:
        # Only the game's creation replayed it (from no answers); every other step went on.
        assert kept.replays == 1 and kept.hits >= len(served)
    else:
        assert kept.hits == 0 and kept.replays > len(answers)
    assert len(kept) == 0  # a finished game's referee is not kept

    referee, calls = play_referee.replayed_from_seed(person_game)
    game = Game.objects.get(pk=made["game"])
    stored = GameLog.objects.get(game=game)
    assert referee.is_over and len(calls) == len(answers)
    assert _json(referee.game.log()) == stored.document
    assert _json(GameRecord(log=referee.game.log(), calls=calls).diagnostics) == stored.diagnostics
    result = stored.document["result"]
    assert (game.winner, game.totals) == (result["winner"], result["totals"])
    # Every move request served to the person, and sent to the bot, is the one the seed and
    # the answers before it give.
    theirs = [call.request for call in calls if call.seat == person_game.seat]
    assert served and _json(theirs) == served
    bots = [call.request for call in calls if call.seat != person_game.seat]
    assert sent and _json(bots) == sent


def _your_turn(client, play_id: int) -> dict:
    state = client.get(f"/api/play/{play_id}/").json()
    assert state["status"] == "your_turn", state
    return state


def _move(client, play_id: int) -> dict:
    request = _your_turn(client, play_id)["request"]
    answer = client.post(f"/api/play/{play_id}/move/", request["legal_moves"][-1], format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def test_answers_changed_behind_a_kept_referee_are_replayed_from_the_seed(person, make_bot, kept):
    client, made = _start(person, make_bot)
    play_id = made["id"]
    for _ in range(3):
        _move(client, play_id)
    before = _your_turn(client, play_id)
    rows = PersonGame.objects.filter(pk=play_id)
    answers = rows.get().answers
    seat = made["seat"]
    assert kept.replays == 1 and len(kept) == 1

    # The same answers with their keys in another order (as PostgreSQL's jsonb keeps them):
    # the kept referee still applies.
    rows.update(answers=[dict(reversed(list(answer.items()))) for answer in answers])
    assert _your_turn(client, play_id)["request"] == before["request"]
    assert kept.replays == 1

    # The person's last answer took another time: their next request says so.
    edited = [dict(answer) for answer in answers]
    last = max(i for i, answer in enumerate(edited) if answer["seat"] == seat)
    edited[last]["latency_ms"] = 777.25
    rows.update(answers=edited)
    after = _your_turn(client, play_id)
    assert kept.replays == 2
    assert after["request"] != before["request"]
    assert after["request"] == _json(_from_seed(play_id)[0].turn().request)
    assert after["request"]["latency_ms"] == 777.25

    # Fewer answers than the kept referee applied (a row restored from a backup): the person's
    # earlier turn again.
    first = min(i for i, answer in enumerate(answers) if answer["seat"] == seat)
    rows.update(answers=answers[:first])
    kept.replays = 0
    again = _your_turn(client, play_id)
    assert kept.replays == 1
    assert again["request"] == _json(_from_seed(play_id)[0].turn().request)
    assert again["moves"] == first and again["request"] != before["request"]


def test_a_step_rolled_back_leaves_no_referee_behind(person, make_bot, kept):
    client, made = _start(person, make_bot)
    play_id = made["id"]
    hand = _your_turn(client, play_id)["request"]["you"]["hand"]
    assert len(kept) == 1
    not_mine = next(card for card in ("1o", "2o", "3o", "4o", "5o", "6o") if card not in hand)
    illegal = client.post(f"/api/play/{play_id}/move/", {"card": not_mine}, format="json")
    assert illegal.status_code == 400 and illegal.json()["code"] == "illegal_move"
    # The move's transaction was rolled back: the referee it took is not put back.
    assert len(kept) == 0
    _move(client, play_id)
    assert kept.replays == 2 and len(kept) == 1


def test_the_steps_benchmark_plays_a_whole_game(person, make_bot, kept):
    # benchmarks/play_steps.py (docs/benchmarks.md) keeps running: its game is a person's game
    # through the services, to the end, with the referee kept between its steps.
    from benchmarks.play_steps import play_one

    answers, steps, cpu, refereeing = play_one(person, [make_bot("greedy")], {"target": 1}, seed=7)
    game = PersonGame.objects.get(person=person)
    assert game.status == PersonGame.Status.FINISHED and len(game.answers) == answers > 0
    assert steps > answers / 2 and cpu > refereeing > 0
    assert kept.replays == 1 and kept.hits > 0
