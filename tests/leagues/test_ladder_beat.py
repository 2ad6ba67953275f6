"""The standing ladder as Celery beat runs it: wired by settings, off unless asked, and its task
starts and plays a rated league among the fit bots of each configured pool."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments import queueing, tasks
from tournaments.models import Bot, League

ROOT = Path(__file__).resolve().parents[2]
SHOW_BEAT = (
    "import json, django; django.setup(); "
    "from django.conf import settings; from config.celery_app import app; "
    "print(json.dumps({'schedule': app.conf.beat_schedule, "
    "'pools': settings.ESCOBA_LADDER_POOLS}))"
)


def beat_config(**env: str) -> dict:
    """The beat schedule and ladder pools a fresh process reads from this environment."""
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


def test_beat_runs_the_ladder_only_when_an_interval_is_set():
    assert "leagues-ladder" not in beat_config()["schedule"]

    config = beat_config(
        ESCOBA_LADDER_INTERVAL_S="900", ESCOBA_LADDER_POOLS="classic/2p,classic/3p"
    )

    assert config["schedule"]["leagues-ladder"] == {
        "task": "leagues.run_ladder",
        "schedule": 900,
    }
    assert config["pools"] == ["classic/2p", "classic/3p"]
    assert tasks.run_ladder.name == "leagues.run_ladder"


@pytest.mark.django_db(transaction=True)
def test_ladder_task_plays_a_rated_league_per_pool_and_skips_a_busy_pool(
    make_bot, settings, monkeypatch
):
    settings.ESCOBA_LADDER_POOLS = ["classic/2p", "classic/3p"]
    bots = [make_bot(name, health=Bot.Health.HEALTHY) for name in ("greedy", "random", "expert")]
    make_bot("random7", health=Bot.Health.UNHEALTHY)

    league_ids = tasks.run_ladder.delay().get()  # eager: the leagues are played on commit

    leagues = League.objects.filter(id__in=league_ids).order_by("pool")
    assert [league.pool for league in leagues] == ["classic/2p", "classic/3p"]
    games = {"classic/2p": 6, "classic/3p": 3}  # 3 pairings × 2 seatings; 1 table × 3 seatings
    for league in leagues:
        assert league.ladder and league.rated
        assert league.status == League.Status.FINISHED
        assert set(league.bots.values_list("id", flat=True)) == {b.id for b in bots}
        assert league.games.filter(status="finished", rated=True).count() == games[league.pool]

    # a pool whose ladder league is still running is skipped, the others start again
    League.objects.filter(pk=leagues[0].pk).update(status=League.Status.RUNNING)
    monkeypatch.setattr(queueing, "matches_enqueue_on_commit", lambda ids: None)
    again = League.objects.filter(id__in=tasks.run_ladder.delay().get())
    assert [league.pool for league in again] == ["classic/3p"]
