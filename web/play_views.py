"""The page where a person plays bots (``/play/<id>/``), and the bot page's Play button.

Thin: the services write (``tournaments.services.play``: a read may play the fallback move of a
clock that ran out, so the page's read is the service's), selectors read. The part of the page
that changes is server-rendered and follows the ``play`` live topic (web/page_streams.py), like the
ladder: no polling where the stream works.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from tournaments.selectors import pages as page_selectors
from tournaments.selectors import play as play_selectors
from tournaments.services import play
from web.page_streams import live_topic_register
from web.views import _found

live_topic_register("play", play_selectors.play_live_version)

SHORTCUTS = [
    ("Tab / Shift+Tab", "move between the cards of your hand, the captures and the buttons"),
    ("← →", "move between the cards of your hand"),
    ("Enter or Space", "choose the card (or the capture) that has focus"),
    ("1 to 9", "choose that card among the cards of your hand you can play"),
    ("P", "play the chosen move"),
    ("Escape", "put the chosen card back"),
]


@require_POST
@login_required
def play_new(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Start a 2-player game against the bot and go to its page."""
    bot = _found(page_selectors.bot_find(bot_id))
    try:
        person_game = play.play_create(person=request.user, opponent=bot.pk)
    except ValidationError as error:
        messages = [m for field in error.message_dict.values() for m in field]
        return render(request, "web/play_refused.html", {"bot": bot, "messages_": messages},
                      status=400)  # fmt: skip
    return redirect("play", person_game.pk)


def _context(request: HttpRequest, person_game_id: int) -> dict:
    state = play.play_read(person_game_id=person_game_id, person=request.user)
    if state is None:
        raise Http404
    body = play.play_state_body(state)
    view = body["view"] or {}
    names = body["seat_names"]
    seats = [
        {**seat, "name": names[seat["seat"]], "you": seat["seat"] == body["seat"]}
        for seat in view.get("seats", [])
    ]
    legal = (body["request"] or {}).get("legal_moves", [])
    version = play_selectors.play_live_version(state.person_game.pk)
    return {
        "state": body,
        "view": view,
        "seats": seats,
        # A card with no legal move (another must capture) cannot be chosen: the request's
        # legal_moves say which, the page derives no rule of its own.
        "hand": [
            {"card": card, "playable": card in {move["card"] for move in legal}}
            for card in view.get("you", {}).get("hand", [])
        ],
        "table": view.get("table", []),
        "plays": view.get("history", []),
        "legal_json": json.dumps(legal),
        "live_version": version[0] if version else "",
        "shortcuts": SHORTCUTS,
    }


@never_cache
@login_required
def play_page(request: HttpRequest, person_game_id: int) -> HttpResponse:
    return render(request, "web/play.html", _context(request, person_game_id))


@never_cache
@login_required
def play_live(request: HttpRequest, person_game_id: int) -> HttpResponse:
    """The part of the page that changes (fetched when its stream says so)."""
    return render(request, "web/partials/play_live.html", _context(request, person_game_id))
