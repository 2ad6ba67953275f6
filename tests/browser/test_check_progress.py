"""My bots follows a queued protocol check in a polite live region, without moving focus.

The check itself runs in a worker (tests/registry/test_check_from_page.py); here the page's
server shares the test's process, so the test plays the worker: it marks a check queued, then
records its report as ``bot_check`` would, and watches the page catch up.
"""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.a11y import page_problems
from tests.browser.forms import log_in
from tournaments.bot_check_progress import PROGRESS_TEXT, QUEUED, check_progress_claim
from tournaments.models import Bot
from tournaments.services.bots import new_secret

PASSWORD = "a-long-password-17"


@pytest.mark.integration
def test_the_check_s_progress_is_announced_politely_and_focus_stays(
    live_server, page, transactional_db, django_user_model
):
    owner = django_user_model.objects.create_user("ana", password=PASSWORD)
    bot = Bot.objects.create(
        owner=owner, name="followed", url="http://127.0.0.1:9/", secret=new_secret()
    )
    log_in(page, live_server.url, "ana", PASSWORD)
    assert check_progress_claim(bot.pk)
    page.goto(f"{live_server.url}/my/bots/")

    line = page.locator(f"#bot-{bot.pk} [data-check-status]")
    expect(line).to_have_text(PROGRESS_TEXT[QUEUED])
    assert line.get_attribute("role") == "status"
    assert line.get_attribute("aria-live") == "polite"
    button = page.locator(f"#bot-{bot.pk}").get_by_role("button", name="Run protocol check")
    button.focus()
    assert page_problems(page) == []

    Bot.objects.filter(pk=bot.pk).update(
        last_checked_at=timezone.now(), last_check_report={"ok": True, "steps": []}
    )

    expect(line).to_contain_text("The protocol check passed at", timeout=15_000)
    expect(line.get_by_role("link", name="Show the report")).to_be_visible()
    assert page.evaluate("document.activeElement.textContent.trim()") == "Run protocol check"
    assert page_problems(page) == []
