"""The ladder service: who it schedules, how many sets, and that its sets are played and rated."""

import datetime
import json
import os
import random
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Count
from django.utils import timezone

from games.engine import Ruleset
from games.ratings.sets import fresh_set_pair_scores
from tournaments import tasks
from tournaments.models import (
    Bot,
    BotVersion,
    Game,
    League,
    Match,
    RatedSet,
    Rating,
    SetScore,
)
from tournaments.selectors.ladder import ladder_recent_sets
from tournaments.selectors.leagues import game_facts
from tournaments.services.ladder import (
    LADDER_USERNAME,
    UNRATED,
    ladder_bots,
    ladder_entrants,
    ladder_fill,
    ladder_league,
    ladder_tick,
    parse_pool,
)
from tournaments.services.league_states import league_finish_if_done
from tournaments.services.match_leases import matches_sweep
from tournaments.services.rating_fits import ratings_recompute

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
POOL = "classic/2p"


def healthy(make_bot, example="greedy", **fields):
    return make_bot(example, health=Bot.Health.HEALTHY, **fields)


def tables(league: League) -> list[frozenset[int]]:
    return [frozenset(m.bots.values_list("id", flat=True)) for m in league.matches.all()]


def test_pool_names():
    assert parse_pool("classic/2p") == ("classic", 2)
    for bad in ("classic", "classic/2", "/2p", "classic/xp"):
        with pytest.raises(ValueError):
            parse_pool(bad)


def test_the_ladder_league_is_one_per_pool_rated_running_and_system_owned():
    league = ladder_league(POOL)
    assert ladder_league(POOL) == league
    assert league.kind == League.Kind.LADDER and league.rated
    assert league.status == League.Status.RUNNING
    assert league.creator.username == LADDER_USERNAME and not league.creator.is_active
    assert not league_finish_if_done(league_id=league.id)  # an empty ladder is not finished


def test_a_pool_never_gets_a_second_ladder():
    league = ladder_league(POOL)
    with pytest.raises(IntegrityError), transaction.atomic():
        League.objects.create(
            name="another", creator=league.creator, ruleset=league.ruleset, pool=POOL, players=2,
            seed=1, kind=League.Kind.LADDER,
        )  # fmt: skip
    assert ladder_league(POOL) == league


def test_only_healthy_active_bots_are_scheduled(make_bot, no_play, settings):
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 50
    fit = [healthy(make_bot), healthy(make_bot, "random"), healthy(make_bot, "expert")]
    make_bot("greedy")  # health unknown: never checked
    make_bot("greedy", health=Bot.Health.UNHEALTHY)
    healthy(make_bot, status=Bot.Status.PAUSED)
    healthy(make_bot, rated_paused_at=timezone.now())  # paused for no-shows: out of rated play
    new = ladder_fill(pool=POOL)
    assert new == no_play and len(new) == 3  # three bots, two sets each at most
    scheduled = {b for table in tables(ladder_league(POOL)) for b in table}
    assert scheduled == {b.id for b in fit}


def test_the_matchmaker_weighs_the_fitted_ratings_of_current_versions(make_bot, record_sets):
    strong, weak = healthy(make_bot), healthy(make_bot, "random")
    record_sets(POOL, [(strong, weak, 1.0)] * 6 + [(strong, weak, 0.75)] * 2)
    newcomer = healthy(make_bot, "expert")

    def weighed() -> dict:
        entrants, _history = ladder_entrants(ladder_league(POOL), ladder_bots())
        return {e.bot: e for e in entrants}

    by_bot = weighed()
    for bot in (strong, weak):
        (rating,) = Rating.objects.filter(bot=bot, pool=POOL)
        assert by_bot[bot.id].rating == float(rating.rating)
        assert by_bot[bot.id].width == pytest.approx(float(rating.rating_high - rating.rating_low))
        assert not by_bot[bot.id].new
    assert by_bot[strong.id].rating > by_bot[weak.id].rating
    assert by_bot[newcomer.id].new and by_bot[newcomer.id].rating == UNRATED
    assert by_bot[newcomer.id].width == float("inf")
    # A new version starts afresh: the old version's rating no longer places the bot.
    Bot.objects.filter(pk=strong.pk).update(protocol_version="2.0")
    assert weighed()[strong.id].new


def test_the_target_of_sets_in_flight_and_the_limit_per_bot_hold(make_bot, no_play, settings):
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 4
    settings.ESCOBA_LADDER_MAX_SETS_PER_BOT = 1
    for _ in range(10):
        healthy(make_bot)
    assert len(ladder_fill(pool=POOL)) == 4
    assert ladder_fill(pool=POOL) == []  # full
    league = ladder_league(POOL)
    load = Counter(b for table in tables(league) for b in table)
    assert max(load.values()) == 1
    first = league.matches.order_by("number").first()
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED)
    added = ladder_fill(pool=POOL)
    assert len(added) == 1
    assert league.matches.filter(status=Match.Status.PENDING).count() == 4
    numbers = list(league.matches.order_by("number").values_list("number", flat=True))
    assert numbers == [1, 2, 3, 4, 5]
    seeds = set(league.matches.values_list("seed", flat=True))
    assert len(seeds) == 5  # each set its own deals
    game = Game.objects.filter(match_id=added[0]).order_by("number")
    assert [g.seating[::-1] for g in game] == [g.seating for g in reversed(list(game))]


def test_two_bots_of_one_owner_never_meet_house_bots_do(make_bot, no_play, settings):
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 20
    owner = get_user_model().objects.create_user(username="farmer")
    for _ in range(3):
        healthy(make_bot, owner=owner)
    assert ladder_fill(pool=POOL) == []
    house = get_user_model().objects.create_user(username="house", is_active=False)
    for _ in range(2):
        healthy(make_bot, owner=house)
    ladder_fill(pool=POOL)
    owners = {b.id: b.owner_id for b in Bot.objects.all()}
    made = tables(ladder_league(POOL))
    assert made
    for table in made:
        a, b = sorted(table)
        assert owners[a] != owners[b] or owners[a] == house.id


def test_ladder_sets_are_played_rated_and_the_ladder_keeps_running(make_bot, settings):
    """Eager Celery plays each set as its fill commits (the refill on a result is off in eager
    tests, so each fill adds one batch)."""
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 3
    bots = [healthy(make_bot), healthy(make_bot, "random"), healthy(make_bot, "expert")]
    for _ in range(4):
        ladder_fill(pool=POOL, rng=random.Random(1))
    league = ladder_league(POOL)
    league.refresh_from_db()
    assert league.status == League.Status.RUNNING
    assert league.matches.count() == 12
    assert not league.matches.exclude(status=Match.Status.FINISHED).exists()
    games = league.games.all()
    assert games.count() == 24 and all(g.rated for g in games)
    # each set rated exactly once, one score for its pair
    assert RatedSet.objects.filter(match__league=league).count() == 12
    per_set = SetScore.objects.values("rated_set").annotate(n=Count("id"))
    assert {row["n"] for row in per_set} == {1} and len(per_set) == 12
    assert ratings_recompute().exact
    # fresh deals, so each set is scored by game points, and the ladder's page shows that score
    team_of = Ruleset.from_dict(league.ruleset).team_of
    bot_of = dict(BotVersion.objects.values_list("id", "bot_id"))
    for row in ladder_recent_sets(league):
        first_bot = row["bots"][0].id
        assert len({game.seed for game in row["games"]}) == 2
        facts = [game_facts(game, team_of) for game in row["games"]]
        ((a, _, by_points),) = fresh_set_pair_scores(facts)
        assert row["score"] == pytest.approx(by_points if a == first_bot else 1 - by_points)
        stored = SetScore.objects.get(rated_set__match=row["match"])
        mine = stored.twelfths if bot_of[stored.player_id] == first_bot else 12 - stored.twelfths
        assert round(12 * row["score"]) == mine
    assert set(league.bots.values_list("id", flat=True)) == {b.id for b in bots}


def test_the_tick_checks_newcomers_and_schedules_them_at_once(make_bot, no_play, settings):
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 10
    newcomers = [make_bot("greedy"), make_bot("random")]  # health unknown
    report = ladder_tick()  # eager: the checks run before the pools are filled
    assert sorted(report["checks"]) == sorted(b.id for b in newcomers)
    assert set(Bot.objects.values_list("health", flat=True)) == {Bot.Health.HEALTHY}
    assert report[POOL] and report[POOL] == no_play
    assert ladder_tick()["checks"] == []  # checked: not again


def test_a_pool_setting_that_is_not_a_pool_is_refused(settings):
    settings.ESCOBA_LADDER_POOLS = ["classic"]
    with pytest.raises(ValueError):
        ladder_tick()


def test_the_sweep_resends_a_lost_ladder_set_while_the_ladder_is_busy(make_bot, no_play, settings):
    """A Redis that lost its queue: a pending ladder set never begins, while the other sets of
    the ladder keep it from ever looking quiet."""
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 2
    for _ in range(4):
        healthy(make_bot)
    lost, busy = ladder_fill(pool=POOL)
    long_ago = timezone.now() - datetime.timedelta(hours=1)
    Match.objects.filter(pk=lost).update(created_at=long_ago)
    # the other set just ended: the ladder league is anything but quiet
    Match.objects.filter(pk=busy).update(status=Match.Status.FINISHED, finished_at=timezone.now())
    no_play.clear()
    assert matches_sweep(queued=0) == [lost]
    assert no_play == [lost]


@pytest.mark.postgres
def test_fills_racing_on_postgresql_never_overshoot_the_target(make_bot, no_play, settings):
    """Eight fills at once (beat's tick and the refills after sets): one holds the lock, the
    others return at once or find the pool full; the target holds."""
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 5
    for _ in range(12):
        healthy(make_bot)
    ladder_league(POOL)
    barrier = threading.Barrier(8)
    made: list[int] = []
    errors: list[BaseException] = []

    def fill() -> None:
        try:
            barrier.wait()
            made.extend(ladder_fill(pool=POOL))
        except BaseException as error:  # e.g. two fills numbering the same set
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=fill) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    league = ladder_league(POOL)
    assert league.matches.count() == len(made) == 5


SHOW_BEAT = (
    "import json, django; django.setup(); "
    "from config.celery_app import app; print(json.dumps(app.conf.beat_schedule))"
)


def beat_schedule(**env: str) -> dict:
    """The beat schedule a fresh process reads from this environment."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ESCOBA_LADDER")}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings.test", **env)
    result = subprocess.run(
        [sys.executable, "-c", SHOW_BEAT],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_beat_ticks_the_ladder_by_default_and_not_without_pools():
    schedule = beat_schedule()
    assert schedule["ladder-tick"]["task"] == tasks.tick_ladder.name == "ladder.tick"
    assert schedule["ladder-tick"]["schedule"] == 5
    assert "ladder-tick" not in beat_schedule(ESCOBA_LADDER_POOLS="")
    assert beat_schedule(ESCOBA_LADDER_TICK_S="2")["ladder-tick"]["schedule"] == 2
