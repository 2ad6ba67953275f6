"""Pages of the ladder, challenges and version tests. Thin: selectors read, services write."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from tournaments import sprt
from tournaments.forms import ChallengeForm, VersionTestForm
from tournaments.ladder_selectors import (
    challenge_summary,
    challengeable_bots,
    ladder_in_flight,
    ladder_of,
    ladder_recent_sets,
)
from tournaments.models import Bot, Challenge, VersionTest
from tournaments.page_selectors import ranking_rows
from tournaments.services.challenges import QuotaExceeded, challenge_create
from tournaments.services.ladder import ladder_pools
from tournaments.services.version_tests import version_test_create


def ladder(request: HttpRequest) -> HttpResponse:
    """A pool's ladder: the sets being played now, the last sets, and the ranking."""
    pools = ladder_pools()
    pool = request.GET.get("pool") or (pools[0] if pools else "")
    if pool not in pools:
        raise Http404
    league = ladder_of(pool)
    context = {
        "nav": "ladder",
        "pool": pool,
        "pools": pools,
        "league": league,
        "in_flight": ladder_in_flight(league) if league else [],
        "recent": ladder_recent_sets(league) if league else [],
        "rows": ranking_rows(pool=pool),
    }
    return render(request, "tournaments/ladder.html", context)


def _errors(error: ValidationError) -> list[str]:
    if hasattr(error, "error_dict"):
        return [message for messages_ in error.message_dict.values() for message in messages_]
    return error.messages


@login_required
@require_POST
def bot_challenge(request: HttpRequest, bot_id: int) -> HttpResponse:
    """The Challenge button: one of the user's bots against this one."""
    opponent = get_object_or_404(Bot, pk=bot_id)
    form = ChallengeForm(request.POST, bots=list(Bot.objects.filter(owner=request.user)))
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect("bot_detail", bot_id=opponent.pk)
    try:
        challenge = challenge_create(
            user=request.user,
            bot_id=form.cleaned_data["bot"],
            opponent_id=opponent.pk,
            sets=form.cleaned_data["sets"],
        )
    except ValidationError as error:
        for message in _errors(error):
            messages.error(request, message)
        return redirect("bot_detail", bot_id=opponent.pk)
    except QuotaExceeded as error:
        messages.error(request, str(error))
        return redirect("bot_detail", bot_id=opponent.pk)
    return redirect("challenge_detail", challenge_id=challenge.pk)


def challenge_detail(request: HttpRequest, challenge_id: int) -> HttpResponse:
    challenge = get_object_or_404(
        Challenge.objects.select_related("bot", "opponent", "league", "creator"), pk=challenge_id
    )
    context = {"nav": "ladder", "challenge": challenge, **challenge_summary(challenge)}
    return render(request, "tournaments/challenge_detail.html", context)


@never_cache
@login_required
def version_test_new(request: HttpRequest) -> HttpResponse:
    """The "Test a version" form."""
    candidates = list(Bot.objects.filter(owner=request.user).order_by("name"))
    form = VersionTestForm(
        request.POST or None,
        candidates=candidates,
        baselines=list(challengeable_bots(request.user)),
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            test = version_test_create(
                user=request.user,
                candidate_id=data["candidate"],
                baseline_id=data["baseline"],
                elo0=data["elo0"],
                elo1=data["elo1"],
                alpha=data["alpha"],
                beta=data["beta"],
                max_sets=data["max_sets"],
            )
        except ValidationError as error:
            for field, errors in getattr(error, "message_dict", {None: error.messages}).items():
                form.add_error(field if field in form.fields else None, errors)
        except QuotaExceeded as error:
            form.add_error(None, str(error))
        else:
            return redirect("version_test_detail", test_id=test.pk)
    context = {"nav": "ladder", "form": form, "has_bots": bool(candidates)}
    return render(request, "tournaments/version_test_new.html", context)


def version_test_detail(request: HttpRequest, test_id: int) -> HttpResponse:
    test = get_object_or_404(
        VersionTest.objects.select_related("candidate", "baseline", "league", "creator"),
        pk=test_id,
    )
    lower, upper = sprt.bounds(test.alpha, test.beta)
    outcomes = [
        {"label": label, "count": count}
        for label, count in zip(["0", "¼", "½", "¾", "1"], test.counts, strict=False)
    ]
    context = {
        "nav": "ladder",
        "test": test,
        "lower": lower,
        "upper": upper,
        "outcomes": outcomes,
        "games_url": reverse("league_games", args=[test.league_id]),
    }
    return render(request, "tournaments/version_test_detail.html", context)
