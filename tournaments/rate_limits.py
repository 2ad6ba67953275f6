"""Rate limits on every door: the API's throttles, the web forms', the health check's.

One counter per scope and client, in the cache (Redis, shared by every web process), whichever
door is knocked on: the web login, the admin login and ``POST /api/auth/token/`` all count in the
``auth`` scope of the same address, so changing doors buys an attacker nothing. The client address
is ``client_address``: ``REMOTE_ADDR``, or behind ``ESCOBA_TRUSTED_PROXIES`` trusted proxies the
address the outermost of them saw.

A counter is DRF's ``SimpleRateThrottle`` window: at most ``num_requests`` requests in the last
``duration`` seconds, a refused request not counted, ``wait()`` as DRF computes it. DRF keeps the
window as a pickled list it reads and writes back whole: two cache round trips and two pickles
per check, about a quarter of a millisecond of CPU for an anonymous read's two checks
(docs/benchmarks-journal.md, "The throttles on an anonymous read"). On Redis the window is a
Redis list of timestamps, newest first, checked and counted by one Lua script (``EVALSHA``: one
round trip, a third of that CPU) through the cache's own connection pool, under the key
``<cache prefix>:throttle:<scope>:<client>`` (a name of its own, so a process still running DRF's
pickled window during a deploy never meets one). With any other cache (the tests' in-process one)
the throttles are DRF's own.

Were the cache unreachable, the throttles would raise on every request; a rate limit is a guard
against abuse, not a reason to refuse everyone, so these let the request through and log the
outage instead.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache.backends.redis import RedisCacheClient
from django.http import HttpRequest
from redis.commands.core import Script
from redis.exceptions import RedisError
from rest_framework import throttling
from rest_framework.settings import api_settings

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors, or the socket's own.
CACHE_ERRORS = (RedisError, ConnectionError, TimeoutError)

# KEYS[1] the window; ARGV: now, duration (s), num_requests. Drops the timestamps older than
# the window from the tail, then counts ``now`` at the head unless the window is full. Returns
# {allowed (1/0), requests in the window after this one, the oldest of them (now if none)}.
_SLIDING_WINDOW = Script(
    None,
    b"""
local edge = tonumber(ARGV[1]) - tonumber(ARGV[2])
while true do
  local last = redis.call('LINDEX', KEYS[1], -1)
  if not last or tonumber(last) > edge then break end
  redis.call('RPOP', KEYS[1])
end
local count = redis.call('LLEN', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[3]) then
  allowed, count = 1, count + 1
  redis.call('LPUSH', KEYS[1], ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return {allowed, count, redis.call('LINDEX', KEYS[1], -1) or ARGV[1]}
""",
)


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


class WindowThrottle(throttling.SimpleRateThrottle):
    """DRF's ``SimpleRateThrottle`` window kept in a Redis list and checked in one round trip
    (the module's docstring says why); DRF's own code on a cache that is not Redis.

    DRF's concrete throttles go before it in a subclass's bases (``(throttling.UserRateThrottle,
    WindowThrottle)``), so their scope, key and ``ScopedRateThrottle``'s rate lookup come first
    and their ``super()`` calls land here.
    """

    cache_format = "throttle:%(scope)s:%(ident)s"
    _window: tuple[int, float] | None = None  # (requests in the window, the oldest one's time)

    def allow_request(self, request: Any, view: Any) -> bool:
        backend = getattr(self.cache, "_cache", None)
        if not isinstance(backend, RedisCacheClient) or self.rate is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        allowed, count, oldest = _SLIDING_WINDOW(
            keys=[self.cache.make_key(self.key)],
            args=[repr(self.now), self.duration, self.num_requests],
            client=backend.get_client(self.key, write=True),
        )
        self._window = (count, float(oldest))
        return bool(allowed)

    def wait(self) -> float | None:
        """DRF's advice over the window the script saw: the time until its oldest request
        leaves it, shared among the requests still allowed in it."""
        if self._window is None:
            return super().wait()
        count, oldest = self._window
        available = self.num_requests - count + 1
        if available <= 0:
            return None
        return (self.duration - (self.now - oldest)) / available


class AddressThrottle(FailOpenMixin, WindowThrottle):
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


class BotCallsThrottle(FailOpenMixin, throttling.UserRateThrottle, WindowThrottle):
    """Actions that make us call a bot's URL (registration, URL changes, checks), per user, API
    and web pages alike: a user must not turn us into a load generator.

    The rate is ``DEFAULT_THROTTLE_RATES["bot_calls"]`` (``ESCOBA_THROTTLE_BOT_CALLS``), else 30 a
    minute.
    """

    scope = "bot_calls"

    def get_rate(self) -> str:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope) or "30/minute"


class VerifyEmailThrottle(FailOpenMixin, throttling.UserRateThrottle, WindowThrottle):
    """Settings changes that give an e-mail address, each mailing it a confirmation link, per
    user: ``ESCOBA_THROTTLE_VERIFY_EMAIL``."""

    scope = "verify_email"
