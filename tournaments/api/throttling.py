"""The API's request throttles: counted in Redis in one round trip each, failing open when their
counters cannot be reached (tournaments/rate_limits.py says how, and how the counters are shared
with the web pages); this module names the classes ``REST_FRAMEWORK`` settings and views refer to.

Each request is counted once per limit it is really held to. A signed-in user counts in ``user``
(``ESCOBA_THROTTLE_USER``), per account. An anonymous request counts in ``anon``
(``ESCOBA_THROTTLE_ANON``), per client address; the ``user`` throttle, which in DRF counts an
anonymous request per address too, leaves it alone when the view also runs the ``anon`` throttle
and the ``anon`` limit is at least as strict: no more requests (``anon``'s number <= ``user``'s)
over a window at least as long (``anon``'s period >= ``user``'s), so that whenever the ``user``
limit would refuse, the ``anon`` one already has. Otherwise (say ``user`` at 1000/hour and
``anon`` at 120/minute) the anonymous request counts in both, by address, and the stricter of
the two refuses first.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rest_framework import throttling

from tournaments.rate_limits import (
    CACHE_ERRORS,
    AuthThrottle,
    BotCallsThrottle,
    FailOpenMixin,
    HealthThrottle,
    SignupThrottle,
    VerifyEmailThrottle,
    WindowThrottle,
    client_address,
)

__all__ = [
    "CACHE_ERRORS",
    "AnonRateThrottle",
    "AuthThrottle",
    "BotCallsThrottle",
    "HealthThrottle",
    "ScopedRateThrottle",
    "SignupThrottle",
    "UserRateThrottle",
    "VerifyEmailThrottle",
    "client_address",
]


class AnonRateThrottle(FailOpenMixin, throttling.AnonRateThrottle, WindowThrottle):
    pass


@lru_cache(maxsize=16)
def _anon_covers_user(anon_rate: str | None, user_rate: str | None) -> bool:
    """Whether the ``anon`` limit refuses an address whenever the ``user`` limit would."""
    if anon_rate is None or user_rate is None:
        return False
    parse = throttling.SimpleRateThrottle.parse_rate
    (anon_requests, anon_seconds), (user_requests, user_seconds) = (
        parse(None, anon_rate), parse(None, user_rate)
    )  # fmt: skip
    return anon_requests <= user_requests and anon_seconds >= user_seconds


class UserRateThrottle(FailOpenMixin, throttling.UserRateThrottle, WindowThrottle):
    """Signed-in users per account; anonymous requests only when ``anon`` is not the stricter
    limit on them (the module's docstring gives the rule)."""

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if not (request.user and request.user.is_authenticated) and self._left_to_anon(view):
            return None
        return super().get_cache_key(request, view)

    def _left_to_anon(self, view: Any) -> bool:
        classes = getattr(view, "throttle_classes", ())
        return any(issubclass(c, throttling.AnonRateThrottle) for c in classes) and (
            _anon_covers_user(self.THROTTLE_RATES.get("anon"), self.rate)
        )


class ScopedRateThrottle(FailOpenMixin, throttling.ScopedRateThrottle, WindowThrottle):
    pass
