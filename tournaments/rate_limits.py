"""Rate limits on every door: the API's throttles, the web forms', the health check's.

One counter per scope and client, in the cache (Redis, shared by every web process), written by
DRF's ``SimpleRateThrottle`` whichever door is knocked on: the web login, the admin login and
``POST /api/auth/token/`` all count in the ``auth`` scope of the same address, so changing doors
buys an attacker nothing. The client address is ``client_address``: ``REMOTE_ADDR``, or behind
``ESCOBA_TRUSTED_PROXIES`` trusted proxies the address the outermost of them saw.

Were the cache unreachable, DRF's throttles would raise on every request; a rate limit is a guard
against abuse, not a reason to refuse everyone, so these let the request through and log the
outage instead.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework import throttling
from rest_framework.settings import api_settings

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors, or the socket's own.
CACHE_ERRORS = (RedisError, ConnectionError, TimeoutError)


def client_address(request: HttpRequest) -> str:
    """The address the request came from, by the trusted-proxy rule (``ESCOBA_TRUSTED_PROXIES``).

    DRF's own reading (``NUM_PROXIES``), so the API's throttles, the web forms' and the live
    streams' caps agree on who a client is; a forged ``X-Forwarded-For`` counts for nothing.
    """
    return throttling.BaseThrottle().get_ident(request)


class FailOpenMixin:
    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except CACHE_ERRORS:
            logger.warning("throttle counters unreachable; letting the request through")
            return True


class AddressThrottle(FailOpenMixin, throttling.SimpleRateThrottle):
    """Counts per client address in ``scope``, whoever is signed in (a subclass names the scope).

    The cache key is the one ``ScopedRateThrottle`` uses for an anonymous request, so the API's
    scoped views and these share their counters.
    """

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AuthThrottle(AddressThrottle):
    """Password tries (API token, web and admin login, sign-up): ``ESCOBA_THROTTLE_AUTH``."""

    scope = "auth"


class SignupThrottle(AddressThrottle):
    """Accounts made from one address (API and web sign-up): ``ESCOBA_THROTTLE_SIGNUP``."""

    scope = "signup"


class HealthThrottle(AddressThrottle):
    """``GET /api/health/``: ``ESCOBA_THROTTLE_HEALTH``."""

    scope = "health"


class BotCallsThrottle(FailOpenMixin, throttling.UserRateThrottle):
    """Actions that make us call a bot's URL (registration, URL changes, checks), per user, API
    and web pages alike: a user must not turn us into a load generator.

    The rate is ``DEFAULT_THROTTLE_RATES["bot_calls"]`` (``ESCOBA_THROTTLE_BOT_CALLS``), else 30 a
    minute.
    """

    scope = "bot_calls"

    def get_rate(self) -> str:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope) or "30/minute"


class VerifyEmailThrottle(FailOpenMixin, throttling.UserRateThrottle):
    """Settings changes that give an e-mail address, each mailing it a confirmation link, per
    user: ``ESCOBA_THROTTLE_VERIFY_EMAIL``."""

    scope = "verify_email"
