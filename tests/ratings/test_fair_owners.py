"""Owners who would bend a rating (issue 34, points 5 to 8): real leagues, real bots on loopback.

- a URL change mid-set is the owner's doing: nothing is replayed, the bot is charged;
- a set belongs to the versions that began it: a version announced mid-set moves nothing;
- only rated play moves rated standing, and a user's league enters another user's bot only on
  rated play's terms: nobody's league can knock a bot out of rated play;
- two bots of one owner never meet in a rated league.
"""

import threading
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection

from bots_sdk.bot import Bot as SdkBot
from bots_sdk.examples import greedy
from bots_sdk.server import serve_in_thread
from tests.clients import client_for
from tournaments.models import Bot, Game, League, Match, RatedSet, Rating, Seat, SetScore
from tournaments.services.bots import bot_check, bot_update
from tournaments.services.ladder import ladder_bots
from tournaments.services.league_creation import (
    ERROR_NOT_ACCEPTING_ENTRY,
    ERROR_TIMEOUT_FOR_OTHERS,
    league_create,
    league_enrol,
)
from tournaments.services.league_schedules import league_start
from tournaments.services.matches import match_begin, match_play, match_release
from tournaments.services.rated_entry import ERROR_ONE_OWNER, bots_rated_eligible

pytestmark = pytest.mark.django_db(transaction=True)


def versions_of(rated_set: RatedSet) -> set[str]:
    return set(rated_set.players.values_list("version", flat=True))


# -- 5. a URL change mid-set ---------------------------------------------------------------------


def test_a_url_change_mid_set_replays_nothing_and_charges_the_bot(
    staff, make_rated_bot, example_servers
):
    """The owner moves the bot while its set is played and its old address goes dark: the
    games are stored as played (its forfeits), the set counts, lost by it, and no game of the
    set is played again (a replay would be a do-over on a deal the bot has seen)."""
    asked, moved = threading.Event(), threading.Event()
    calls = []
    lock = threading.Lock()

    def plays_then_moves(state):
        with lock:
            calls.append(state.game_id)
            # Once it has answered in both games of the set (each game asked it twice: the first
            # answer is in), the owner moves the bot and stops the old server.
            counts = Counter(calls)
            now = len(counts) == 2 and min(counts.values()) >= 2 and not asked.is_set()
            if now:
                asked.set()
        if now:
            moved.wait(10)
        return greedy.choose(state)

    old = serve_in_thread(plays_then_moves, name="mover")
    mover = make_rated_bot("greedy", name="mover")
    Bot.objects.filter(pk=mover.pk).update(url=old.url)
    rival = make_rated_bot("random")
    league = league_create(
        creator=staff, name="moved", bot_ids=[mover.id, rival.id], rated=True, max_faults=0
    )
    league_start(league_id=league.id, user=staff, enqueue=False)
    match = league.matches.get()
    outcome = {}

    def play() -> None:
        try:
            outcome["result"] = match_play(match_id=match.id)
        finally:
            connection.close()

    player = threading.Thread(target=play)
    player.start()
    try:
        assert asked.wait(30), "the mover was never asked for its third move"
        mover.refresh_from_db()
        bot_update(bot=mover, url=example_servers["greedy"].url)  # the owner's own act
        old.stop()  # the old address refuses every call from now on
    finally:
        moved.set()
        player.join(60)

    assert outcome["result"].status == "played" and outcome["result"].released == 0
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 1  # nothing replayed
    games = list(Game.objects.filter(match=match))
    assert all(g.status == Game.Status.FINISHED and g.reason == "forfeit" for g in games)
    assert all(g.seating[g.forfeit] == mover.id for g in games)  # charged to the mover
    assert not Seat.objects.filter(no_show=True).exists()  # it played, then failed
    (score,) = SetScore.objects.all()
    mover_version = match.versions[str(mover.id)]  # the version that began the set
    assert mover_version == mover.versions.get(version="").id
    mover_score = score.twelfths if score.player_id == mover_version else 12 - score.twelfths
    assert mover_score == 0  # the set counts, lost by the bot that moved


# -- 6. versions ---------------------------------------------------------------------------------


def test_a_version_switch_mid_set_moves_nothing(staff, make_rated_bot):
    """A set begun by version 1.0 is 1.0's, even when the bot announces 2.0 (and passes a
    check) before the set ends, and even when the set is handed back and begun again."""
    served = SdkBot(choose=greedy.choose, name="greedy", version="1.0")
    with serve_in_thread(served) as server:
        bot = make_rated_bot("greedy", name="switcher")
        Bot.objects.filter(pk=bot.pk).update(url=server.url)
        bot.refresh_from_db()
        assert bot_check(bot=bot).passed
        rival = make_rated_bot("random")
        league = league_create(creator=staff, name="switch", bot_ids=[bot.id, rival.id], rated=True)
        league_start(league_id=league.id, user=staff, enqueue=False)
        match = league.matches.get()
        assert match_begin(match_id=match.id, claim="first") is not None  # the set begins

        served.version = "2.0"  # mid-set the owner announces another version, and checks it
        bot.refresh_from_db()
        assert bot_check(bot=bot).passed
        bot.refresh_from_db()
        assert bot.protocol_version == "2.0"

        assert match_release(match_id=match.id, claim="first")  # handed back, begun again
        assert match_play(match_id=match.id).status == "played"

    (rated_set,) = RatedSet.objects.all()
    assert versions_of(rated_set) == {"1.0", ""}  # the versions that began it
    ratings = {r.version.version: r.sets for r in Rating.objects.filter(bot=bot)}
    assert ratings == {"1.0": 1}  # 2.0 has no set: nothing was moved onto it


# -- 7. only rated play moves rated standing -----------------------------------------------------


def test_a_user_s_league_cannot_take_another_user_s_bot_out_of_rated_play(
    user, user_client, make_rated_bot, settings
):
    settings.ESCOBA_NOSHOW_PAUSE_AFTER = 1
    mine = make_rated_bot("random", owner=user)
    victim = make_rated_bot("greedy", name="victim")
    assert victim.accepts_challenges

    # the knock-out of the issue: a 10 ms timeout and no fault allowed
    knock_out = {"name": "ko", "bots": [mine.id, victim.id], "move_timeout_ms": 10, "max_faults": 0}
    response = user_client.post("/api/leagues/", knock_out, format="json")
    assert response.status_code == 400
    low = settings.ESCOBA_RATED_MOVE_TIMEOUT_MS
    assert response.json()["errors"] == {
        "move_timeout_ms": [ERROR_TIMEOUT_FOR_OTHERS.format(names="victim", low=low)]
    }
    # a bot whose owner accepts no challenges is entered by nobody else
    Bot.objects.filter(pk=victim.pk).update(accepts_challenges=False)
    fair = {**knock_out, "move_timeout_ms": low}
    response = user_client.post("/api/leagues/", fair, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"bots": [ERROR_NOT_ACCEPTING_ENTRY.format(name="victim")]}
    # its owner's own league takes it on any terms
    response = client_for(victim.owner).post(
        "/api/leagues/",
        {
            **knock_out,
            "name": "own",
            "bots": [victim.id, make_rated_bot("random", owner=victim.owner).id],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert not League.objects.filter(name="ko").exists()

    # on rated play's terms the league plays; the victim, down meanwhile, is a no-show there,
    # which moves nothing of its rated standing
    Bot.objects.filter(pk=victim.pk).update(accepts_challenges=True, url="http://127.0.0.1:9/")
    response = user_client.post("/api/leagues/", fair, format="json")
    assert response.status_code == 201, response.json()
    league = League.objects.get(pk=response.json()["id"])
    league_start(league_id=league.id, user=user)
    league.refresh_from_db()
    assert league.status == League.Status.FINISHED
    assert set(Seat.objects.filter(game__league=league, no_show=True).values_list("bot", flat=True))
    victim.refresh_from_db()
    assert (victim.no_shows, victim.no_shows_in_row) == (0, 0)
    assert (victim.rated_paused_at, victim.rated_retry_at) == (None, None)
    assert victim.health == Bot.Health.HEALTHY
    assert victim in bots_rated_eligible() and victim.id in {b.id for b in ladder_bots()}


# -- 8. owners never meet in rated play ----------------------------------------------------------


def test_a_rated_league_holds_one_bot_per_owner(staff, make_rated_bot):
    farmer = get_user_model().objects.create_user(username="farmer")
    star = make_rated_bot("expert", owner=farmer, name="star")
    feeder = make_rated_bot("random", owner=farmer, name="feeder")
    other = make_rated_bot("greedy")
    response = client_for(staff).post(
        "/api/leagues/",
        {"name": "cup", "bots": [star.id, other.id, feeder.id], "rated": True},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"bots": [ERROR_ONE_OWNER.format(names="star, feeder")]}
    assert not League.objects.exists()
    # unrated, the same league is the staff's to make
    assert league_create(creator=staff, name="friendly", bot_ids=[star.id, feeder.id])

    # nor may the feeder enrol next to its star
    league = league_create(creator=staff, name="open cup", bot_ids=[star.id, other.id], rated=True)
    with pytest.raises(ValidationError) as refused:
        league_enrol(league_id=league.id, bot_id=feeder.id, user=farmer)
    assert refused.value.message_dict == {"bot": [ERROR_ONE_OWNER.format(names="star, feeder")]}

    # the house's example bots (an inactive account's) are owned by nobody who could farm
    house = get_user_model().objects.create_user(username="examples", is_active=False)
    bots = [make_rated_bot(e, owner=house).id for e in ("greedy", "random")]
    assert league_create(creator=staff, name="house", bot_ids=bots, rated=True).rated


def test_the_new_league_page_refuses_the_knock_out_on_its_field(user, client, make_rated_bot):
    """The browser's *New league* form says what the API says, next to the field."""
    mine = make_rated_bot("random", owner=user)
    victim = make_rated_bot("greedy", name="victim")
    client.force_login(user)
    form = {
        "name": "ko", "ruleset": "classic", "players": 2, "move_timeout_ms": 10,
        "max_faults": 0, "bots": [mine.id, victim.id],
    }  # fmt: skip
    page = client.post("/leagues/new/", form)
    assert page.status_code == 200
    low = ERROR_TIMEOUT_FOR_OTHERS.format(names="victim", low=1000)
    assert page.context["form"].errors == {"move_timeout_ms": [low]}
    assert not League.objects.exists()
