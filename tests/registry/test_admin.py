"""The Bot admin: lists and filters bots, runs checks, never shows a secret."""

import pytest
from django.test import Client

from tournaments.models import Bot, BotCheck
from tournaments.services.bots import bot_register

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/tournaments/bot/"


@pytest.fixture
def staff(db) -> Client:
    from django.contrib.auth import get_user_model

    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def bot(user, switchable_bot) -> Bot:
    return bot_register(owner=user, name="listed", url=switchable_bot.url)


def test_list_filters_and_search_never_show_the_secret(staff, bot):
    for query in ("", "?health__exact=unknown", "?status__exact=active", "?q=listed", "?q=ana"):
        page = staff.get(CHANGELIST + query)
        assert page.status_code == 200
        assert b"listed" in page.content
        assert bot.secret.encode() not in page.content
    assert b"listed" not in staff.get(CHANGELIST + "?health__exact=unhealthy").content


def test_change_page_hides_the_secret_and_the_url_is_read_only(staff, bot):
    page = staff.get(f"{CHANGELIST}{bot.pk}/change/")
    assert page.status_code == 200
    assert bot.secret.encode() not in page.content
    assert b'name="secret"' not in page.content and b'name="url"' not in page.content
    assert staff.get(f"{CHANGELIST}add/").status_code == 403


def test_admin_actions_check_pause_and_resume(staff, bot, switchable_bot):
    def run(action: str):
        return staff.post(CHANGELIST, {"action": action, "_selected_action": [bot.pk]})

    assert run("run_check").status_code == 302
    check = BotCheck.objects.get()
    assert (check.trigger, check.passed) == ("admin", True)
    assert Bot.objects.get().health == "healthy"

    run("pause")
    assert Bot.objects.get().status == "paused"
    run("resume")
    assert Bot.objects.get().status == "active"

    switchable_bot.broken = True
    run("run_check")
    assert Bot.objects.get().check_failures == 1
    history = staff.get("/admin/tournaments/botcheck/")
    assert history.status_code == 200 and history.content.count(b"listed") >= 2
