"""The ladder page, the Challenge button, the "Test a version" form and the test's LLR chart,
clicked through in Chromium against the live server (Celery is eager: what is started is played
before the next page loads)."""

import random

import pytest
from playwright.sync_api import expect

from tournaments.models import Bot, Challenge, VersionTest
from tournaments.services.challenges import ERROR_NOT_ACCEPTING
from tournaments.services.ladder import ladder_fill
from web.templatetags.charts import chart_points

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="My bots", exact=True)).to_be_visible()


def test_the_ladder_page_shows_recent_sets_and_the_ranking(
    league_world, live_server, page, screenshot, settings
):
    world = league_world()
    # the bots of league_world share an owner: give each its own, as ladder players would have
    for number, bot in enumerate(world.bots):
        bot.owner = type(world.owner).objects.create_user(username=f"player{number}")
        bot.health = Bot.Health.HEALTHY
        bot.save(update_fields=["owner", "health"])
    settings.ESCOBA_LADDER_SETS_IN_FLIGHT = 3
    ladder_fill(pool="classic/2p", rng=random.Random(3))
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Ladder").click()
    expect(page.get_by_role("heading", name="Ladder classic/2p")).to_be_visible()
    recent = page.get_by_test_id("recent-sets")
    expect(recent.locator("li")).to_have_count(3)
    expect(page.get_by_test_id("ladder-ranking").locator("tbody tr")).to_have_count(3)
    screenshot(page, "ladder")


def test_challenge_a_bot_and_test_a_version_by_clicking(
    league_world, live_server, page, screenshot, django_user_model, settings
):
    settings.ESCOBA_TEST_SETS_IN_FLIGHT = 2
    world = league_world()
    expert = next(bot for bot in world.bots if bot.name == "expert")
    rival = django_user_model.objects.create_user(username="rival")
    target = next(bot for bot in world.bots if bot.name == "random")
    target.owner = rival
    target.save(update_fields=["owner"])

    log_in(page, live_server, world.owner.username, world.password)
    page.goto(f"{live_server.url}/bots/{target.pk}/")
    form = page.get_by_role("form", name=f"Challenge {target.name}")
    form.get_by_label("Your bot").select_option(label="expert")
    form.get_by_label("Sets").fill("2")
    # eager Celery plays the sets inside the POST: allow a loaded machine its time (the click
    # itself does not wait for the answer, the expectation below does)
    form.get_by_role("button", name="Challenge").click(no_wait_after=True)
    expect(page.get_by_role("heading", name="Challenge: expert v random")).to_be_visible(
        timeout=120_000
    )
    expect(page.get_by_test_id("sets-done")).to_have_text("2")
    expect(page.get_by_test_id("challenge-status")).to_have_text("finished")
    challenge = Challenge.objects.get()
    assert (challenge.bot, challenge.opponent, challenge.sets) == (expert, target, 2)
    screenshot(page, "challenge", phone=False)
    page.goto(f"{live_server.url}/bots/{target.pk}/")
    expect(page.get_by_test_id("challenges").locator("li")).to_have_count(1)

    page.goto(f"{live_server.url}/bots/{expert.pk}/")
    page.get_by_role("link", name="Test a version").click()
    page.get_by_label("Candidate").select_option(label="expert")
    page.get_by_label("Baseline").select_option(label="random")
    page.get_by_label("H0: Elo at most").fill("-100")
    page.get_by_label("H1: Elo at least").fill("300")
    page.get_by_label("At most this many sets").fill("30")
    page.get_by_role("button", name="Start the test").click(no_wait_after=True)
    expect(page.get_by_test_id("test-status")).to_have_text("accepted", timeout=120_000)
    test = VersionTest.objects.get()
    chart = page.locator("svg.chart")
    expect(chart).to_have_attribute("data-points", str(len(test.series)))
    points = chart_points(chart.evaluate("node => node.outerHTML"))
    assert [x for x, _ in points] == sorted(x for x, _ in points)
    assert points[-1][1] < points[0][1]  # the LLR climbs towards H1's bound (up on screen)
    expect(page.get_by_test_id("outcomes")).to_be_visible()
    screenshot(page, "version-test")


def test_the_test_form_says_what_is_wrong(league_world, live_server, page):
    world = league_world()
    log_in(page, live_server, world.owner.username, world.password)
    page.goto(f"{live_server.url}/tests/new/")
    page.get_by_label("Candidate").select_option(label="expert")
    page.get_by_label("Baseline").select_option(label="expert")
    page.get_by_role("button", name="Start the test").click()
    expect(page.locator(".errorlist")).to_contain_text("A bot cannot play itself.")
    assert not VersionTest.objects.exists()


def test_the_challenge_form_says_what_is_wrong_where_it_is(
    league_world, live_server, page, django_user_model
):
    """Errors inline: a field's under the field, with focus on it; the service's refusal (a bot
    that does not accept challenges) above the form, with focus there. All by keyboard."""
    world = league_world()
    rival = django_user_model.objects.create_user(username="rival")
    target = next(bot for bot in world.bots if bot.name == "random")
    target.owner, target.accepts_challenges = rival, False
    target.save(update_fields=["owner", "accepts_challenges"])
    log_in(page, live_server, world.owner.username, world.password)
    page.goto(f"{live_server.url}/bots/{target.pk}/")
    expect(page.get_by_text("This bot does not accept challenges.")).to_be_visible()
    page.goto(f"{live_server.url}/bots/{target.pk}/challenge/")
    page.get_by_label("Your bot").select_option(label="expert")
    page.get_by_label("Sets").fill("0")
    page.get_by_label("Sets").press("Enter")
    expect(page.locator("#id_sets_error")).to_be_visible()
    expect(page.get_by_label("Sets")).to_be_focused()
    page.get_by_label("Sets").fill("1")
    page.get_by_label("Sets").press("Enter")
    errors = page.locator("#form-errors")
    expect(errors).to_contain_text(ERROR_NOT_ACCEPTING.format(name=target.name))
    expect(errors).to_be_focused()
    assert not Challenge.objects.exists()
