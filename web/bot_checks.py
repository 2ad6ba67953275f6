"""An owner's protocol check from the My bots page: queued as a task, followed by the page.

The POST queues the check and returns at once (the check calls the bot for up to about 11 s, in
a worker); the bot's section then says where the check has got to, in a polite live region that
``web/static/web/js/check-progress.js`` keeps up to date from ``my_bot_check_status`` (focus never
moves). Without JavaScript, reloading the page shows the same.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from tournaments.bot_check_progress import check_progress
from tournaments.models import Bot
from tournaments.selectors import pages as page_selectors
from tournaments.services.bot_checks import CheckUnavailable, bot_check_request

CHECK_QUEUED = "The protocol check of {name} is queued; its section below says when it is done."
CHECK_UNDER_WAY = "A protocol check of {name} is under way already; its section says how far."
CHECK_UNAVAILABLE = "The check queue is unreachable right now, so nothing was queued; try again."


def _own_bot(request: HttpRequest, bot_id: int) -> Bot:
    bot = page_selectors.bot_find(bot_id)
    if bot is None:
        raise Http404
    if bot.owner_id != request.user.pk:
        raise PermissionDenied
    return bot


@login_required
@require_POST
def my_bot_check(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _own_bot(request, bot_id)
    try:
        queued = bot_check_request(bot=bot, user=request.user)
    except CheckUnavailable:
        messages.error(request, CHECK_UNAVAILABLE)
    else:
        done = CHECK_QUEUED if queued else CHECK_UNDER_WAY
        messages.info(request, done.format(name=bot.name))
    return redirect(f"{reverse('my_bots')}?report={bot.pk}#bot-{bot.pk}")


@never_cache
@login_required
@require_GET
def my_bot_check_status(request: HttpRequest, bot_id: int) -> JsonResponse:
    """``{"state": "queued"|"running"|"done"|"never", "passed", "checked_at", "message"}``."""
    return JsonResponse(check_progress(_own_bot(request, bot_id)))
