"""The API's request throttles: DRF's, failing open when their counters cannot be reached.

The counters and the client-address rule are shared with the web pages (tournaments/rate_limits.py
says how); this module names the classes ``REST_FRAMEWORK`` settings and views refer to.
"""

from __future__ import annotations

from rest_framework import throttling

from tournaments.rate_limits import (
    CACHE_ERRORS,
    AuthThrottle,
    BotCallsThrottle,
    FailOpenMixin,
    HealthThrottle,
    SignupThrottle,
    VerifyEmailThrottle,
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


class AnonRateThrottle(FailOpenMixin, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(FailOpenMixin, throttling.UserRateThrottle):
    pass


class ScopedRateThrottle(FailOpenMixin, throttling.ScopedRateThrottle):
    pass
