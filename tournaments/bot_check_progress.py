"""Where an owner's protocol check of a bot has got to, for the page that asked for it.

A check calls the bot for up to about 11 s, so it runs as a task on the maintenance queue
(``bots.check_for_owner``), never in the web process; the page follows it through this state,
kept in the cache (Redis, shared by the web processes and the workers): ``queued`` when asked,
``running`` once a worker has it, gone when it ends, and then the bot's last report tells the
outcome. One check of a bot at a time: asking again while one is under way queues nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.utils import timezone

# How long a queued or running state may outlive a worker that died holding it: above the
# task's hard time limit plus a wait in the queue.
PROGRESS_S = 300

QUEUED = "queued"
RUNNING = "running"
DONE = "done"
NEVER = "never"

PROGRESS_TEXT = {
    QUEUED: "Protocol check queued: it starts as soon as a worker is free.",
    RUNNING: "Protocol check running: calling the bot now.",
    NEVER: "",
}
DONE_PASSED = "The protocol check passed at {time} UTC."
DONE_FAILED = "The protocol check failed at {time} UTC; see the report."


def _key(bot_id: int) -> str:
    return f"bots.check_for_owner:{bot_id}"


def check_progress_claim(bot_id: int) -> bool:
    """Mark a check of the bot queued; False (and nothing changed) when one is under way."""
    return cache.add(
        _key(bot_id), {"state": QUEUED, "since": timezone.now().isoformat()}, PROGRESS_S
    )


def check_progress_running(bot_id: int) -> None:
    cache.set(_key(bot_id), {"state": RUNNING, "since": timezone.now().isoformat()}, PROGRESS_S)


def check_progress_clear(bot_id: int) -> None:
    cache.delete(_key(bot_id))


def _checked_since(bot: Any, since: str) -> bool:
    checked = bot.last_checked_at
    return checked is not None and checked >= datetime.fromisoformat(since)


def check_progress(bot: Any) -> dict:
    """``{"state", "passed", "checked_at", "message"}`` of the bot's owner check."""
    current = cache.get(_key(bot.pk))
    if current is not None and _checked_since(bot, current["since"]):
        current = None  # it ended, whatever the state says (a worker that died before clearing)
    if current is not None:
        state = current["state"]
        return {"state": state, "passed": None, "checked_at": None, "message": PROGRESS_TEXT[state]}
    if bot.last_checked_at is None or not bot.last_check_report:
        return {"state": NEVER, "passed": None, "checked_at": None, "message": ""}
    passed = bool(bot.last_check_report.get("ok"))
    text = DONE_PASSED if passed else DONE_FAILED
    return {
        "state": DONE,
        "passed": passed,
        "checked_at": bot.last_checked_at.isoformat(),
        "message": text.format(time=f"{bot.last_checked_at:%Y-%m-%d %H:%M:%S}"),
    }
