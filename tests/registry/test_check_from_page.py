"""A protocol check asked for on the My bots page runs as a task; the page follows it.

A check calls the bot for up to about 11 s: it must never hold the web process. The POST
queues it and answers at once; ``/my/bots/<id>/check/status/`` says where it has got to.
"""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from tournaments.bot_check_progress import DONE_PASSED, check_progress_claim
from tournaments.models import Bot, BotCheck
from tournaments.services.bots import new_secret
from web.bot_checks import CHECK_UNDER_WAY

pytestmark = pytest.mark.django_db


def _bot(owner, url: str) -> Bot:
    return Bot.objects.create(owner=owner, name="checked", url=url, secret=new_secret())


def _status(client, bot: Bot) -> dict:
    response = client.get(reverse("my_bot_check_status", args=[bot.pk]))
    assert response.status_code == 200
    return response.json()


def test_the_owner_s_check_runs_as_a_task_and_its_status_says_how_it_went(client, user, greedy_bot):
    bot = _bot(user, greedy_bot)
    client.force_login(user)
    assert _status(client, bot)["state"] == "never"

    response = client.post(reverse("my_bot_check", args=[bot.pk]))

    assert response.status_code == 302
    check = BotCheck.objects.get(bot=bot)
    assert check.trigger == BotCheck.Trigger.OWNER and check.passed
    status = _status(client, bot)
    assert status["state"] == "done" and status["passed"] is True
    assert status["message"].startswith(DONE_PASSED.split("{")[0])
    page = client.get(reverse("my_bots")).content.decode()
    assert 'role="status" aria-live="polite"' in page and 'data-check-state="done"' in page


def test_a_check_under_way_is_not_queued_again(client, user, greedy_bot):
    bot = _bot(user, greedy_bot)
    client.force_login(user)
    assert check_progress_claim(bot.pk)

    answer = client.post(reverse("my_bot_check", args=[bot.pk]), follow=True)

    assert CHECK_UNDER_WAY.format(name=bot.name) in answer.content.decode()
    assert not BotCheck.objects.filter(bot=bot).exists()
    assert _status(client, bot)["state"] == "queued"


def test_no_one_else_checks_or_follows_another_s_bot(client, user, other_user, greedy_bot):
    bot = _bot(other_user, greedy_bot)
    client.force_login(user)

    assert client.post(reverse("my_bot_check", args=[bot.pk])).status_code == 403
    assert client.get(reverse("my_bot_check_status", args=[bot.pk])).status_code == 403
    assert client.get(reverse("my_bot_check_status", args=[999999])).status_code == 404
    assert not BotCheck.objects.filter(bot=bot).exists()


@pytest.mark.integration
def test_a_slow_bot_s_check_does_not_hold_the_web_process(
    client, transactional_db, django_user_model, celery_worker_process, misbehaving
):
    """The bot answers nothing for seconds: the page's POST still answers at once, and the
    status goes from queued or running to done once the worker has finished."""
    owner = django_user_model.objects.create_user("owner", password="a-long-password-1")
    bot = _bot(owner, misbehaving("slow"))
    client.force_login(owner)

    started = time.monotonic()
    response = client.post(reverse("my_bot_check", args=[bot.pk]))
    answered_in = time.monotonic() - started

    assert response.status_code == 302
    assert answered_in < 3, answered_in
    assert _status(client, bot)["state"] in ("queued", "running")
    deadline = time.monotonic() + 60
    while (status := _status(client, bot))["state"] != "done" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert status["state"] == "done" and status["passed"] is False
    assert BotCheck.objects.get(bot=bot).trigger == BotCheck.Trigger.OWNER
    assert time.monotonic() - started > 2 * answered_in, "the check itself took its time"
