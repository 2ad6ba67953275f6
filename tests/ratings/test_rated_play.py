"""Who enters rated play, no-shows, and what a rated set counts for: real leagues, real bots."""

import datetime
import threading

import pytest
from django.db.models import F
from django.utils import timezone
from rest_framework.test import APIClient

from bots_sdk.bot import Bot as SdkBot
from bots_sdk.examples import greedy
from bots_sdk.server import serve_in_thread
from tests.clients import client_for
from tournaments.models import Bot, Game, League, Notification, RatedSet, Rating, Seat, SetScore
from tournaments.services.bots import bot_check
from tournaments.services.ladder import ladder_bots
from tournaments.services.league_creation import league_create, league_enrol
from tournaments.services.league_schedules import league_start
from tournaments.services.rated_entry import (
    ERROR_BOT_NOT_RATED,
    ERROR_RATED_STAFF_ONLY,
    bots_rated_eligible,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_user_who_is_not_staff_cannot_create_a_rated_league(user_client, make_rated_bot):
    bots = [make_rated_bot("greedy").id, make_rated_bot("random").id]
    response = user_client.post(
        "/api/leagues/", {"name": "farm", "bots": bots, "rated": True}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"rated": [ERROR_RATED_STAFF_ONLY]}
    assert not League.objects.exists()
    # without asking, a user's league is unrated
    response = user_client.post("/api/leagues/", {"name": "fun", "bots": bots}, format="json")
    assert response.status_code == 201 and response.json()["rated"] is False


def test_staff_rated_leagues_take_only_bots_in_rated_play(staff, make_bot, make_rated_bot):
    checked = make_rated_bot("greedy")
    unknown = make_bot("random")  # registered, never passed a check
    paused = make_rated_bot("expert")
    Bot.objects.filter(pk=paused.pk).update(rated_paused_at=F("created_at"))
    response = client_for(staff).post(
        "/api/leagues/",
        {"name": "cup", "bots": [checked.id, unknown.id, paused.id], "rated": True},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "bots": [
            ERROR_BOT_NOT_RATED.format(name=unknown.name),
            ERROR_BOT_NOT_RATED.format(name=paused.name),
        ]
    }
    assert list(bots_rated_eligible()) == [checked]
    # an owner may enrol only a bot in rated play into a rated league
    league = league_create(creator=staff, name="open cup", bot_ids=[checked.id], rated=True)
    with pytest.raises(Exception) as refused:
        league_enrol(league_id=league.id, bot_id=unknown.id, user=unknown.owner)
    assert refused.value.message_dict == {"bot": [ERROR_BOT_NOT_RATED.format(name=unknown.name)]}


def test_a_bot_that_never_answers_is_a_no_show_rated_for_nobody_and_paused(
    staff, make_rated_bot, example_servers, settings
):
    settings.ESCOBA_NOSHOW_PAUSE_AFTER = 2
    dead = make_rated_bot("greedy", name="dead")
    Bot.objects.filter(pk=dead.pk).update(url="http://127.0.0.1:9/")  # nothing listens there
    live = make_rated_bot("random")
    league = league_create(
        creator=staff,
        name="no-show",
        bot_ids=[live.id, dead.id],
        rated=True,
        max_faults=0,
        move_timeout_ms=200,
    )
    league_start(league_id=league.id, user=staff)

    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    games = list(Game.objects.filter(league=league))
    assert all(g.reason == "forfeit" and not g.rated for g in games)  # recorded, not rated
    assert set(Seat.objects.filter(no_show=True).values_list("bot_id", flat=True)) == {dead.id}
    assert not RatedSet.objects.exists() and not Rating.objects.exists()
    dead.refresh_from_db()
    # both games of the set failed at once: one blip, one no-show in the run, and a backoff
    assert (dead.no_shows, dead.no_shows_in_row, dead.rated_paused_at) == (2, 1, None)
    assert dead.rated_retry_at > timezone.now() + datetime.timedelta(seconds=20)
    assert dead in bots_rated_eligible() and dead.id not in {b.id for b in ladder_bots()}

    # once the wait is over (the clock moved on), the next set's no-shows grow the run again
    Bot.objects.filter(pk=dead.pk).update(rated_retry_at=timezone.now())
    again = league_create(
        creator=staff, name="no-show again", bot_ids=[live.id, dead.id], rated=True,
        max_faults=0, move_timeout_ms=200,
    )  # fmt: skip
    league_start(league_id=again.id, user=staff)
    dead.refresh_from_db()
    live.refresh_from_db()
    assert (dead.no_shows, dead.no_shows_in_row) == (4, 2)
    assert dead.rated_paused_at is not None  # two in a row: out of rated play
    assert (live.no_shows, live.no_shows_in_row, live.rated_paused_at) == (0, 0, None)
    assert dead not in bots_rated_eligible()
    (told,) = Notification.objects.filter(user=dead.owner, event="bot.rated_paused")
    assert told.data == {"no_shows": 2, "recheck_in_s": 60}

    # shown in the API, on the game and its seats, and on the bot
    api = APIClient()
    game = api.get(f"/api/games/{games[0].id}/").json()
    assert game["no_show"] is True and game["rated"] is False
    assert {s["bot"]["id"]: s["no_show"] for s in game["seats"]} == {dead.id: True, live.id: False}
    bot = api.get(f"/api/bots/{dead.id}/").json()
    assert (bot["no_shows"], bot["no_shows_in_row"], bot["rated_play"]) == (4, 2, False)

    # back at a live address, a passing check brings it back into rated play, and says so
    Bot.objects.filter(pk=dead.pk).update(url=example_servers["greedy"].url)
    dead.refresh_from_db()
    assert bot_check(bot=dead).passed
    dead.refresh_from_db()
    assert (dead.no_shows, dead.no_shows_in_row, dead.rated_paused_at) == (4, 0, None)
    assert dead in bots_rated_eligible() and dead.id in {b.id for b in ladder_bots()}
    assert Notification.objects.filter(user=dead.owner, event="bot.rated_resumed").count() == 1


def test_a_bot_that_played_and_then_failed_loses_its_set_by_forfeit(staff, make_rated_bot):
    calls = {}
    lock = threading.Lock()
    stop = threading.Event()

    def tires(state):
        """Plays well for two moves of each game, then never answers again."""
        with lock:
            calls[state.game_id] = calls.get(state.game_id, 0) + 1
            made = calls[state.game_id]
        if made > 2:
            stop.wait(2)
        return greedy.choose(state)

    with serve_in_thread(tires, name="tires") as server:
        tired = make_rated_bot("greedy", name="tired")
        Bot.objects.filter(pk=tired.pk).update(url=server.url)
        rival = make_rated_bot("random")
        league = league_create(
            creator=staff,
            name="tired",
            bot_ids=[tired.id, rival.id],
            rated=True,
            max_faults=0,
            move_timeout_ms=300,
        )
        league_start(league_id=league.id, user=staff)
        stop.set()

    games = list(Game.objects.filter(league=league))
    assert all(g.reason == "forfeit" and g.seating[g.forfeit] == tired.id for g in games)
    assert not Seat.objects.filter(no_show=True).exists()  # it showed up, then failed
    assert all(g.rated for g in games)
    (score,) = SetScore.objects.all()
    tired_version = tired.versions.get().id
    tired_score = score.twelfths if score.player_id == tired_version else 12 - score.twelfths
    assert tired_score == 0  # the set is lost by forfeit
    ratings = dict(Rating.objects.values_list("bot_id", "rating"))
    assert ratings[rival.id] > ratings[tired.id]
    tired.refresh_from_db()
    assert (tired.no_shows, tired.no_shows_in_row) == (0, 0)


def test_a_version_change_starts_a_new_provisional_entry_and_keeps_the_old(
    staff, make_rated_bot, record_sets
):
    strong = SdkBot(choose=greedy.choose, name="greedy", version="1.0")
    with serve_in_thread(strong) as server:
        bot = make_rated_bot("greedy", name="versioned")
        Bot.objects.filter(pk=bot.pk).update(url=server.url)
        bot.refresh_from_db()
        assert bot_check(bot=bot).passed
    bot.refresh_from_db()
    assert bot.protocol_version == "1.0"
    rival = make_rated_bot("random")
    record_sets("classic/2p", [(bot, rival, 1.0)] * 6)
    api = APIClient()
    ranking = api.get("/api/rankings/?pool=classic/2p").json()["results"]
    assert [(row["name"], row["version"]) for row in ranking] == [
        ("versioned", "1.0"),
        (rival.name, ""),
    ]

    newer = SdkBot(choose=greedy.choose, name="greedy", version="2.0")
    with serve_in_thread(newer) as server:
        Bot.objects.filter(pk=bot.pk).update(url=server.url)
        bot.refresh_from_db()
        assert bot_check(bot=bot).passed
    bot.refresh_from_db()
    assert bot.protocol_version == "2.0"
    # the old version leaves the ranking (refitted on the change); its rating stays
    ranking = api.get("/api/rankings/?pool=classic/2p").json()["results"]
    assert [row["name"] for row in ranking] == [rival.name]
    assert ranking[0]["los_next"] is None
    profile = api.get(f"/api/bots/{bot.id}/").json()
    assert profile["version"] == "2.0" and profile["ratings"] == []
    versions = {v["version"]: v for v in profile["versions"]}
    assert versions["1.0"]["current"] is False and versions["2.0"]["current"] is True
    assert versions["1.0"]["ratings"][0]["sets"] == 6
    assert versions["2.0"]["ratings"] == []

    # the new version's first set makes a new, provisional entry
    record_sets("classic/2p", [(bot, rival, 1.0)])
    ranking = api.get("/api/rankings/?pool=classic/2p").json()["results"]
    entry = next(row for row in ranking if row["bot"] == bot.id)
    assert entry["version"] == "2.0" and entry["provisional"] is True and entry["sets"] == 1
    assert Rating.objects.filter(bot=bot).count() == 2
