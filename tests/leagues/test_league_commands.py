"""Operator commands."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tournaments.models import Bot, League, Rating

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_league_run_inline_plays_and_prints_standings(make_rated_bot):
    bots = [make_rated_bot("greedy"), make_rated_bot("random")]
    names = ",".join(b.name.upper() for b in bots)  # bot names are unique ignoring case
    output = run("league_run", "--inline", "--bots", names, "--name", "cli")
    league = League.objects.get(name="cli")
    assert league.status == League.Status.FINISHED
    assert "standings" in output and bots[0].name[:4] in output
    assert "finished in" in output


def test_league_run_follows_a_league_the_workers_play(make_bot):
    # Celery is eager in tests: the "workers" play the league as the start commits
    bots = [make_bot("greedy"), make_bot("random")]
    with pytest.raises(CommandError, match="rated play"):  # never checked: unrated only
        run("league_run", "--bots", ",".join(b.name for b in bots), "--name", "refused")
    output = run(
        "league_run", "--bots", ",".join(b.name for b in bots), "--name", "queued", "--unrated"
    )
    assert League.objects.get(name="queued").status == League.Status.FINISHED
    assert "finished in" in output and "standings" in output


def test_league_run_refuses_unknown_bots_and_bad_settings(make_bot):
    with pytest.raises(CommandError, match="nobody"):
        run("league_run", "--bots", "nobody")
    bot = make_bot("greedy")
    with pytest.raises(CommandError, match="games_per_pairing"):
        run("league_run", "--bots", bot.name, "--games-per-pairing", "3")


def test_ratings_recompute_command_checks_and_repairs(make_rated_bot):
    run(
        "league_run",
        "--inline",
        "--bots",
        ",".join(b.name for b in [make_rated_bot("greedy"), make_rated_bot("random")]),
    )
    assert "reproduced exactly" in run("ratings_recompute")
    Rating.objects.update(rating=Decimal("1234.00"))
    with pytest.raises(CommandError, match="differ"):
        run("ratings_recompute")
    assert "corrected" in run("ratings_recompute", "--write")
    assert "reproduced exactly" in run("ratings_recompute")


def test_bots_register_examples_registers_and_moves_running_bots(example_servers):
    urls = [example_servers["greedy"].url, example_servers["random"].url]
    output = run("bots_register_examples", "--owner", "demo", *urls)
    assert output.count("registered") == 2
    assert set(Bot.objects.filter(owner__username="demo").values_list("name", flat=True)) == {
        "greedy",
        "random",
    }
    Bot.objects.filter(name="greedy").update(url="http://127.0.0.1:9/")
    assert "moved greedy" in run("bots_register_examples", "--owner", "demo", urls[0])
    assert Bot.objects.get(name="greedy").url == urls[0]
    with pytest.raises(CommandError):
        run("bots_register_examples", "http://127.0.0.1:9/")
