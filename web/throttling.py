"""The API's rate limits on the web forms: log-in (ours and the admin's), sign-up, bot
registration and checks.

The counters are the API's (tournaments/rate_limits.py): a password tried on the web page, in the
admin or through ``POST /api/auth/token/`` counts once in the same ``auth`` scope of the same
client address. A form past its limit answers 429 with a page in our words and ``Retry-After``;
reading a form (GET) is never counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle

from tournaments.rate_limits import AuthThrottle, BotCallsThrottle, SignupThrottle

__all__ = ["AuthThrottle", "BotCallsThrottle", "SignupThrottle", "throttled"]

TOO_MANY_TRIES = "Too many tries from here"
TRY_AGAIN_IN = "Please wait {wait} before trying again."


def _wait_text(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


def throttled_page(request: HttpRequest, wait: float | None) -> HttpResponse:
    """The 429 page: what happened and how long to wait, with ``Retry-After``."""
    seconds = max(1, math.ceil(wait or 60))
    response = render(
        request,
        "web/throttled.html",
        {"heading": TOO_MANY_TRIES, "advice": TRY_AGAIN_IN.format(wait=_wait_text(seconds))},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def throttled(
    *throttles: type[SimpleRateThrottle], methods: tuple[str, ...] = ("POST",)
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Count each ``methods`` request to the view in every one of ``throttles``; past a limit,
    answer the 429 page instead of calling the view."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in methods:
                waits = []
                for throttle_class in throttles:
                    throttle = throttle_class()
                    if not throttle.allow_request(request, None):
                        waits.append(throttle.wait())
                if waits:
                    return throttled_page(request, max(wait or 0 for wait in waits))
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
