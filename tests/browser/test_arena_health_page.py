"""The admin's Arena health page (issue 37) held to WCAG 2.1 AA like every page: axe-core at
desktop and phone width, with figures and with a source that could not be read."""

from __future__ import annotations

import pytest
import redis
from playwright.sync_api import expect

from tests.browser.a11y import at_width, page_problems
from tests.browser.conftest import DESKTOP, PHONE
from tests.conftest import celery_app_on_broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
PASSWORD = "operator-pass-9912"


def _problems(page, label: str) -> list[str]:
    found = []
    for width, viewport in {"desktop": DESKTOP, "phone": PHONE}.items():
        at_width(page, viewport)
        found += [f"{label} @{width}: {line}" for line in page_problems(page)]
        wide = page.evaluate("document.documentElement.scrollWidth")
        if wide > viewport["width"]:
            found.append(f"{label} @{width}: the page is {wide} px wide")
    page.set_viewport_size(DESKTOP)
    return found


def test_the_arena_health_page_passes_axe_with_figures_and_without(
    league_world, live_server, page, settings, redis_url, django_user_model, screenshot
):
    redis.Redis.from_url(redis_url).flushall()
    settings.REDIS_URL = redis_url
    # Played eagerly here, never copied from a saved one: its games are counted in this Redis.
    world = league_world(fresh=True)
    with celery_app_on_broker(redis_url):  # the queue depths, from the same Redis
        django_user_model.objects.create_superuser(username="operator", password=PASSWORD)
        page.goto(f"{live_server.url}/admin/login/?next=/admin/")
        page.get_by_label("Username").fill("operator")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("link", name="Arena health").click()
        pools = page.get_by_test_id("health-pools")
        row = pools.get_by_role("row", name=world.league.pool)
        expect(row.get_by_role("cell").first).to_have_text("6")  # 3 pairings x 2 games
        problems = _problems(page, "arena health")
        page.reload()
        expect(page.get_by_test_id("health-queues")).to_contain_text("tasks waiting in queue games")
        problems += _problems(page, "arena health, reloaded")
        screenshot(page, "arena-health")

    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with celery_app_on_broker(settings.REDIS_URL):
        page.reload()
        expect(page.get_by_test_id("health-problems")).to_contain_text("Redis unreachable")
        problems += _problems(page, "arena health, Redis down")
    assert problems == [], "\n".join(problems)
