"""Pages of the ladder, challenges and version tests. Thin: selectors read, services write.

Both forms (challenge a bot, test a version) show their errors inline, field by field, with focus
on the first one (``web.forms.FocusFirstErrorMixin``), like the site's other forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from tournaments import sprt
from tournaments.selectors import ladder as ladder_selectors
from tournaments.selectors import pages as page_selectors
from tournaments.selectors import ratings as rating_selectors
from tournaments.services.challenges import QuotaExceeded, challenge_create
from tournaments.services.ladder import ladder_pools
from tournaments.services.version_tests import version_test_create
from web.forms import ChallengeForm, VersionTestForm
from web.views import _form_errors_from, _found

OUTCOME_LABELS = ("0", "¼", "½", "¾", "1")
T = TypeVar("T")


def _ladder_context(request: HttpRequest) -> dict:
    pools = ladder_pools()
    pool = request.GET.get("pool") or (pools[0] if pools else "")
    if pool not in pools:
        raise Http404
    league = ladder_selectors.ladder_of(pool)
    live = page_selectors.league_live_version(league.pk) if league else None
    return {
        "nav": "ladder",
        "pool": pool,
        "pools": pools,
        "league": league,
        "live_version": live[0] if live else "",
        "in_flight": ladder_selectors.ladder_in_flight(league) if league else [],
        "recent": ladder_selectors.ladder_recent_sets(league) if league else [],
        "rows": rating_selectors.ranking_rows(pool=pool),
    }


def ladder(request: HttpRequest) -> HttpResponse:
    """A pool's ladder: the sets being played now, the last sets, and the ranking; the part that
    changes follows the ladder's league stream (``/live/league/<id>/``), so it updates as sets
    end without polling."""
    return render(request, "web/ladder.html", _ladder_context(request))


def ladder_live(request: HttpRequest) -> HttpResponse:
    """The part of the ladder page that changes as sets end (fetched when its stream says so)."""
    return render(request, "web/partials/ladder_live.html", _ladder_context(request))


def _started(form: Form, start: Callable[[], T]) -> T | None:
    """What `start` (a service call) made, or None with its refusal on the form: field errors
    on their fields, a quota's message above them."""
    try:
        return start()
    except ValidationError as error:
        _form_errors_from(form, error)
    except QuotaExceeded as error:
        form.add_error(None, str(error))
    return None


@never_cache
@login_required
def bot_challenge(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Challenge a bot with one of the user's bots; errors come back on this page's form."""
    opponent = _found(page_selectors.bot_find(bot_id))
    mine = [b for b in page_selectors.bots_of_owner(owner=request.user) if b.pk != opponent.pk]
    form = ChallengeForm(request.POST or None, bots=mine)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        challenge = _started(
            form,
            lambda: challenge_create(
                user=request.user, bot_id=data["bot"], opponent_id=opponent.pk, sets=data["sets"]
            ),
        )
        if challenge is not None:
            return redirect("challenge_detail", challenge_id=challenge.pk)
    context = {"nav": "ladder", "opponent": opponent, "form": form, "has_bots": bool(mine)}
    return render(request, "web/challenge_new.html", context)


def challenge_detail(request: HttpRequest, challenge_id: int) -> HttpResponse:
    challenge = _found(ladder_selectors.challenge_find(challenge_id))
    context = {
        "nav": "ladder",
        "challenge": challenge,
        **ladder_selectors.challenge_summary(challenge),
    }
    return render(request, "web/challenge_detail.html", context)


@never_cache
@login_required
def version_test_new(request: HttpRequest) -> HttpResponse:
    """The "Test a version" form."""
    candidates = list(page_selectors.bots_of_owner(owner=request.user))
    form = VersionTestForm(
        request.POST or None,
        candidates=candidates,
        baselines=list(ladder_selectors.challengeable_bots(request.user)),
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        test = _started(
            form,
            lambda: version_test_create(
                user=request.user,
                candidate_id=data["candidate"],
                baseline_id=data["baseline"],
                **{name: data[name] for name in sprt.DEFAULTS},
            ),
        )
        if test is not None:
            return redirect("version_test_detail", test_id=test.pk)
    context = {"nav": "ladder", "form": form, "has_bots": bool(candidates)}
    return render(request, "web/version_test_new.html", context)


def version_test_detail(request: HttpRequest, test_id: int) -> HttpResponse:
    test = _found(ladder_selectors.version_test_find(test_id))
    lower, upper = sprt.bounds(test.alpha, test.beta)
    outcomes = [
        {"label": label, "count": count}
        for label, count in zip(OUTCOME_LABELS, test.counts, strict=False)
    ]
    context = {
        "nav": "ladder",
        "test": test,
        "lower": lower,
        "upper": upper,
        "outcomes": outcomes,
        "games_url": reverse("league_games", args=[test.league_id]),
    }
    return render(request, "web/version_test_detail.html", context)
