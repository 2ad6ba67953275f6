"""Server-rendered browser pages. Thin: they read through selectors and write through services."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, wraps
from pathlib import Path

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.http import require_POST
from markupsafe import Markup, escape

from games.engine import PRESETS
from games.ratings.ranking import DEFAULT_POOL
from tournaments import observers
from tournaments.messages import QUEUE_UNAVAILABLE
from tournaments.models import Bot, Game, League
from tournaments.read_cache import cached_read
from tournaments.selectors import game_pages
from tournaments.selectors import leagues as selectors
from tournaments.selectors import pages as page_selectors
from tournaments.selectors import play as play_selectors
from tournaments.selectors import ratings as rating_selectors
from tournaments.services.accounts import account_register
from tournaments.services.bots import bot_register
from tournaments.services.league_creation import league_create, league_create_errors
from tournaments.services.league_schedules import league_start
from tournaments.services.league_states import QueueUnavailable
from tournaments.services.no_shows import noshow_pause_after
from tournaments.services.quotas import QuotaExceeded
from tournaments.services.rating_fits import provisional_half_width
from web.forms import (
    BotForm,
    ChallengeForm,
    LeagueForm,
    LoginForm,
    RankingFilterForm,
    SignupForm,
)
from web.templatetags.cards import french_labels

# A row id in a URL: at most 18 digits, so an absurd id is a 404 rather than an integer overflow
# (a 500) in the database driver.
ROW_ID = "[0-9]{1,18}"
RECENT_GAMES = 20
# An id no row has, where a reversed address's id goes.
ID_MARK = 987654321987654321
LEAGUES_LISTED = 100

BOT_REGISTERED = "Bot “{name}” is registered. Copy its signing secret now: it is shown only once."
BOT_REGISTERED_OWN_SECRET = (
    "Bot “{name}” is registered; every call to it is signed with the secret you gave."
)
LEAGUE_CREATED = "League “{name}” is created and open: start it when its bots are entered."
LEAGUE_STARTED = "League “{name}” has started: its schedule is being written and played."
NOTIFICATIONS_LISTED = 20
# The latest finished games "My bots" lists under each bot (its profile has more).
MY_BOT_GAMES = 5
# The site's icon (16, 32 and 48 px, drawn from favicon.svg) at the address browsers and the
# admin ask for by default.
FAVICON = Path(__file__).parent / "static" / "web" / "favicon.ico"


def cached_page(scopes: Callable[..., list[str]]) -> Callable:
    """Serve the page to anonymous visitors from the cache while ``scopes(**kwargs)`` (what it
    shows: see ``tournaments.read_cache``) have not changed, with an ETag for a 304."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, **kwargs: int) -> HttpResponse:
            return cached_read(request, scopes(**kwargs), lambda: view(request, **kwargs))

        return wrapper

    return decorator


def _found(row):
    """The row a selector found, or a 404 page."""
    if row is None:
        raise Http404
    return row


def _row_id(request: HttpRequest, name: str) -> int | None:
    """The query parameter ``name`` as a row id: None when absent, a 404 when not an id."""
    value = request.GET.get(name)
    if value is None:
        return None
    if not re.fullmatch(ROW_ID, value):
        raise Http404
    return int(value)


def _page_url(request: HttpRequest, name: str, row_id: int | None) -> str | None:
    """This page's address with ``name`` (``after`` or ``before``) set to ``row_id`` and the
    other one dropped: the link to the next or previous page; None when there is none."""
    if row_id is None:
        return None
    query = request.GET.copy()
    query.pop("after", None)
    query.pop("before", None)
    query[name] = str(row_id)
    return f"{request.path}?{query.urlencode()}"


def _form_errors_from(form, error: ValidationError) -> None:
    """Show a service's ``ValidationError`` on the form, field by field where it can."""
    if hasattr(error, "error_dict"):
        for field, errors in error.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error.messages)


@cached_page(lambda: ["ratings"])
def rankings(request: HttpRequest) -> HttpResponse:
    pools = rating_selectors.rating_pools() or [DEFAULT_POOL]
    form = RankingFilterForm(request.GET or None, pools=pools)
    pool, query = pools[0], ""
    if form.is_valid():
        pool = form.cleaned_data["pool"] or pool
        query = form.cleaned_data["q"].strip()
    rows = rating_selectors.ranking_rows(pool=pool)
    if query:
        rows = [row for row in rows if query.lower() in row["name"].lower()]
    by_people = request.GET.get("sort") == "people"
    rows = play_selectors.with_people_rows(rows, sort=by_people)
    # Every row links its bot: the address around the id, reversed once for all of them.
    bot_link = reverse("bot_detail", args=[ID_MARK]).partition(str(ID_MARK))
    context = {
        "nav": "rankings",
        "by_people": by_people,
        "form": form,
        # The pool switcher is written by the template (Django's widget templates cost more
        # than the rest of the form); it marks what the form's ``Select`` would: the value sent.
        "selected_pool": request.GET.get("pool") if form.is_bound else None,
        "pool": pool,
        "pools": pools,
        "rows": rows,
        "bot_link": (bot_link[0], bot_link[2]),
        "query": query,
        "provisional_half_width": provisional_half_width(),
        "noshow_pause_after": noshow_pause_after(),
    }
    return render(request, "web/rankings.html", context)


def league_list(request: HttpRequest) -> HttpResponse:
    rows = page_selectors.league_rows(limit=LEAGUES_LISTED)
    return render(request, "web/league_list.html", {"nav": "leagues", "rows": rows})


def _progress(league: League, progress: dict[str, int]) -> dict:
    """The league's progress (``selectors.league_progress``) with the bar's percentage and the
    games planned."""
    progress["percent"] = 100 * progress["done"] / progress["total"] if progress["total"] else 0
    # Before its start a league has no games written: say how many its bots would play.
    progress["planned"] = progress["total"] or (
        page_selectors.league_planned_games(league=league)
        if league.status == League.Status.OPEN
        else None
    )
    return progress


# A crosstable's column heads: each bot's name cut to this many characters.
HEAD_CHARS = 10


def _head(name: str) -> str:
    """``name|truncatechars:HEAD_CHARS``: the filter normalises and walks every name (a tenth of
    a league page's CPU); one already short and normalised comes back as it is."""
    if len(name) <= HEAD_CHARS and unicodedata.is_normalized("NFC", name):
        return name
    return truncatechars(name, HEAD_CHARS)


def _crosstable(league: League, bots: list[tuple[int, str]]) -> dict:
    """The selector's crosstable with names, labels and win/loss colouring for the template.

    Each row's cells come as their markup (``cells``), names escaped once per bot: a league of
    40 bots has 1,600 cells, and escaping each of their values, or even each cell, in the
    template was most of the crosstable's cost. Each bot has its column head (``head``)."""
    table = selectors.league_crosstable(league, bots=bots)
    bots = table["bots"]
    names = {bot["id"]: escape(bot["name"]) for bot in bots}
    games_url = reverse("league_games", args=[league.pk])
    rows = []
    for bot, row in zip(bots, table["rows"], strict=True):
        bot["head"] = _head(bot["name"])
        cells = []
        name = names[bot["id"]]
        for opponent, cell in zip(bots, row["cells"], strict=True):
            if cell is None:
                html = '<td class="self" aria-label="same bot"></td>'
            elif not cell["games"]:
                html = '<td class="num muted">·</td>'
            else:
                score, games = cell["score"], cell["games"]
                outcome = "win" if score * 2 > games else "loss" if score * 2 < games else "even"
                label = f"{score:g}/{games}"
                html = (
                    f'<td class="num cell-{outcome}"><a href="{games_url}?a={bot["id"]}&amp;'
                    f'b={opponent["id"]}" aria-label="{name} against {names[opponent["id"]]}: '
                    f'{label}">{label}</a></td>'
                )
            cells.append(html)
        rows.append({"bot": bot, "cells": Markup("".join(cells))})  # noqa: S704 (escaped above)
    return {"bots": bots, "rows": rows}


def _points(points: float) -> str:
    """Match points (a multiple of ½) as ``floatformat:-1`` shows them in the site's English
    ("3", "3.5"), without the filter's locale lookups on every row."""
    return f"{points:.1f}" if points % 1 else f"{points:.0f}"


def _league_live_context(league_id: int) -> dict:
    """What the live part of a league page shows (a 404 when there is no such league)."""
    league, progress = _found(page_selectors.league_with_progress(league_id))
    # The league's own results only: the pool rating is the one Elo a page shows.
    standings, bots = selectors.league_table(league)
    for row in standings:
        row["points_shown"] = _points(row["points"])
    return {
        "league": league,
        "progress": _progress(league, progress),
        "standings": standings,
        "recent_games": page_selectors.league_recent_games(league=league, limit=RECENT_GAMES),
        "crosstable": _crosstable(league, bots),
        "fault_rows": page_selectors.league_fault_rows(league=league, limit=RECENT_GAMES),
    }


@cached_page(lambda league_id: [f"league:{league_id}", "ratings"])  # standings show Elo
def league_detail(request: HttpRequest, league_id: int) -> HttpResponse:
    context = {**_league_live_context(league_id), "nav": "leagues"}
    return render(request, "web/league_detail.html", context)


@cached_page(lambda league_id: [f"league:{league_id}", "ratings"])  # standings show Elo
def league_live(request: HttpRequest, league_id: int) -> HttpResponse:
    """The part of the league page that changes while games finish; the page polls it."""
    return render(request, "web/partials/league_live.html", _league_live_context(league_id))


@cached_page(lambda league_id: [f"league:{league_id}"])
def league_games(request: HttpRequest, league_id: int) -> HttpResponse:
    """A league's games, or those between bots ``a`` and ``b`` (where a crosstable cell leads)."""
    league = _found(page_selectors.league_find(league_id))
    ids = [value for value in (request.GET.get("a"), request.GET.get("b")) if value]
    if not all(re.fullmatch(ROW_ID, value) for value in ids):
        raise Http404
    bot_ids = {int(value) for value in ids}
    after, before = (_row_id(request, name) for name in ("after", "before"))
    bots, page = selectors.league_games_page(
        league=league, bot_ids=sorted(bot_ids), after=after, before=before
    )
    if len(bots) != len(bot_ids):
        raise Http404
    context = {
        "nav": "leagues",
        "league": league,
        "bots": bots,
        "games": page.rows,
        "next_url": _page_url(request, "after", page.after),
        "previous_url": _page_url(request, "before", page.before),
    }
    return render(request, "web/league_games.html", context)


@cached_page(lambda bot_id: [f"bot:{bot_id}", "ratings"])
def bot_detail(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _found(page_selectors.bot_shown(bot_id))
    figures = page_selectors.bot_rating_figures(bot=bot)
    pools = figures["pools"]
    pool = request.GET.get("pool") if request.GET.get("pool") in pools else None
    pool = pool or (pools[0] if pools else DEFAULT_POOL)
    series = rating_selectors.bot_rating_series(bot, pool)
    # The chart draws the current version: a new version starts a new, provisional series.
    current = next((entry for entry in series if entry["current"]), None)
    latency, faults = page_selectors.bot_latency_and_faults(bot=bot)
    context = {
        "bot": bot,
        "pool": pool,
        "pools": pools,
        "ratings": figures["current"],
        "chart_ratings": [point["rating"] for point in current["points"]] if current else [],
        "versions": figures["versions"],
        "provisional_half_width": provisional_half_width(),
        "noshow_pause_after": noshow_pause_after(),
        "latency": latency,
        "faults": faults,
        "head_to_head": page_selectors.bot_head_to_head(bot=bot),
        "recent_games": page_selectors.bot_recent_game_rows(bot=bot, limit=RECENT_GAMES),
        "is_owner": request.user.is_authenticated and bot.owner_id == request.user.pk,
        "challenges": page_selectors.bot_challenge_rows(bot=bot),
        "version_tests": page_selectors.bot_version_test_rows(bot=bot),
        "challenge_form": _challenge_form(request, bot),
        "people": play_selectors.bot_people_record(bot=bot),
        "can_play": request.user.is_authenticated
        and bot.status == Bot.Status.ACTIVE
        and (bot.accepts_challenges or bot.owner_id == request.user.pk),
    }
    return render(request, "web/bot_detail.html", context)


def _challenge_form(request: HttpRequest, bot: Bot) -> ChallengeForm | None:
    """The Challenge form of a bot's page (sent to ``ladder_views.bot_challenge``): for a
    signed-in user with another bot to send, when ``bot`` accepts challenges or is theirs."""
    if not request.user.is_authenticated:
        return None
    if bot.owner_id != request.user.pk and not bot.accepts_challenges:
        return None
    mine = [b for b in page_selectors.bots_of_owner(owner=request.user) if b.pk != bot.pk]
    return ChallengeForm(bots=mine) if mine else None


@cached_page(lambda game_id: [f"game:{game_id}"])
def game_replay(request: HttpRequest, game_id: int) -> HttpResponse:
    page = _found(game_pages.game_page(game_id))
    game = page.game
    # What anyone but the seats may see of it (tournaments/observers.py): a rated game in play
    # names no bot, and nothing is shown of a game whose deal a game still in play shares.
    sight = page.sight
    seats = page.seats
    if not sight.seats_named:
        seats = [observers.AnonymousSeat(seat=s.seat, team=s.team) for s in seats]
    names = {seat.seat: seat.bot.name for seat in seats if seat.bot is not None}
    names.update(play_selectors.person_seat(game=game))  # a person's seat, when one played
    sealed = sight.sealed
    log = game_pages.game_log_document(game=game) if sight.record_shown else None
    seat_count = len(log["seats"]) if log else len(seats)
    seat_names = [names.get(seat, observers.seat_label(seat)) for seat in range(seat_count)]
    # A bot fields both seats of its partnership: a team is named by its distinct bots.
    team_numbers = sorted({seat.team for seat in seats})
    teams = [
        list({s.bot.pk: s.bot for s in seats if s.team == team and s.bot is not None}.values())
        for team in team_numbers
    ]
    team_names = [
        " & ".join(bot.name for bot in bots) or f"team {n}" for n, bots in enumerate(teams)
    ]
    if not sight.seats_named:
        teams = []
    first_table: list[str] = []
    if log:
        # The first deal is rendered on the server too, so the page shows cards before (or
        # without) its script; the viewer then redraws every step the same way.
        first = log["rounds"][0]
        lucky = set(first["lucky_deal"]["cards"]) if first["lucky_deal"] else set()
        first_table = [card for card in first["table"] if card not in lucky]
        for seat in seats:
            seat.first_hand = first["deals"][0][seat.seat]
    half = (len(seats) + 1) // 2
    context = {
        "game": game,
        "seats": seats,
        "teams": teams,
        # Seats run clockwise round the table, so partners (0 and 2, 1 and 3) sit opposite.
        "top_seats": seats[:half],
        "bottom_seats": seats[half:][::-1],
        "partnerships": len(team_numbers) < len(seats),
        # A user's unrated partnership league may field one bot in both seats of a team.
        "shared_hand_teams": len(team_numbers) < len(seats)
        and any(len(bots) == 1 for bots in teams),
        "team_names": team_names,
        "outcome": _outcome(game, team_names),
        "ruleset_id": f"{game.league.ruleset.get('name')}@{game.league.ruleset.get('version')}",
        "log": log,
        "sealed": sealed,
        "anonymous": not sight.seats_named,
        # Not stored yet: the viewer follows the game as it is played (web/game_streams.py).
        "live": log is None and sight.in_play and not sealed,
        "first_table": first_table,
        "seat_names": seat_names,
        "french_labels": french_labels(),
        "log_url": reverse("api:game-log", args=[game.pk]),
        "diagnostics_url": reverse("api:game-diagnostics", args=[game.pk]),
        "own_plays": game_pages.game_own_plays(game=game, seats=page.seats, viewer=request.user)
        if log
        else [],
        "same_deals": page.other_game_ids if log else [],
    }
    response = render(request, "web/game_replay.html", context)
    if context["own_plays"]:
        add_never_cache_headers(response)  # the owner's debug output: never kept by a cache
    return response


def _outcome(game: Game, team_names: list[str]) -> str:
    if game.status == Game.Status.ABORTED:
        return f"Aborted ({game.reason})" if game.reason else "Aborted"
    if game.status != Game.Status.FINISHED:
        return "Not played yet"
    if game.winner is None:
        return "Draw"
    winner = team_names[game.winner] if game.winner < len(team_names) else f"team {game.winner}"
    forfeit = " (opponent forfeited)" if game.forfeit is not None else ""
    return f"{winner} wins{forfeit}"


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            token = account_register(
                username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except ValidationError as error:
            _form_errors_from(form, error)
        else:
            login(request, token.user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("my_bots")
    return render(request, "web/auth/signup.html", {"nav": "signup", "form": form})


class PageLoginView(LoginView):
    template_name = "web/auth/login.html"
    authentication_form = LoginForm
    next_page = "my_bots"
    extra_context = {"nav": "login"}


@never_cache
@login_required
def my_bots(request: HttpRequest) -> HttpResponse:
    """The owner's bots and the registration form.

    A new bot's secret is rendered in the answer to the POST itself, never stored for a later
    page, so it is shown exactly once.
    """
    form = BotForm(request.POST or None)
    new_bot = None
    if request.method == "POST" and form.is_valid():
        own_secret = form.cleaned_data["secret"] is not None
        try:
            new_bot = bot_register(owner=request.user, **form.cleaned_data)
        except ValidationError as error:
            _form_errors_from(form, error)
        else:
            done = BOT_REGISTERED_OWN_SECRET if own_secret else BOT_REGISTERED
            messages.success(request, done.format(name=new_bot.name))
            form = BotForm()
            if own_secret:
                new_bot = None  # the owner has the secret already: nothing to show once
    context = {
        "nav": "my_bots",
        "form": form,
        "bots": page_selectors.owner_bots_at_play(owner=request.user, games=MY_BOT_GAMES),
        "new_bot": new_bot,
        "notifications": page_selectors.owner_notifications(
            owner=request.user, limit=NOTIFICATIONS_LISTED
        ),
    }
    return render(request, "web/my_bots.html", context)


@never_cache
@login_required
def league_new(request: HttpRequest) -> HttpResponse:
    """Create a league: the API's rules (``league_create_errors``, then ``league_create``)."""
    form = LeagueForm(
        request.POST or None,
        bots=page_selectors.league_bot_choices(),
        rulesets=list(PRESETS),
        staff=request.user.is_staff,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            errors = league_create_errors(
                name=data["name"], players=data["players"], bot_ids=data["bots"]
            )
            if errors:
                raise ValidationError(errors)
            league = league_create(
                creator=request.user,
                name=data["name"],
                ruleset_name=data["ruleset"],
                players=data["players"],
                games_per_pairing=data["games_per_pairing"],
                move_timeout_ms=data["move_timeout_ms"],
                max_faults=data["max_faults"],
                rated=data.get("rated", False),
                bot_ids=data["bots"],
            )
        except ValidationError as error:
            _form_errors_from(form, error)
        else:
            messages.success(request, LEAGUE_CREATED.format(name=league.name))
            return redirect("league_detail", league_id=league.pk)
    return render(request, "web/league_new.html", {"nav": "leagues", "form": form})


@login_required
@require_POST
def league_start_page(request: HttpRequest, league_id: int) -> HttpResponse:
    """The creator's start button on the league page (``league_start``, as the API's)."""
    league = _found(page_selectors.league_find(league_id))
    try:
        league = league_start(league_id=league.pk, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    except QueueUnavailable:
        messages.error(request, QUEUE_UNAVAILABLE)
    except QuotaExceeded as error:
        messages.error(request, str(error))
    else:
        messages.success(request, LEAGUE_STARTED.format(name=league.name))
    return redirect("league_detail", league_id=league.pk)


@cache
def _favicon_bytes() -> bytes:
    return FAVICON.read_bytes()


@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``: asked for by pages without an icon link (the admin's) and by browsers."""
    return HttpResponse(_favicon_bytes(), content_type="image/x-icon")
