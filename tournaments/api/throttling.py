"""Request throttles that keep the API answering when their counters cannot be reached.

The counters live in the cache, which is Redis. Were Redis down, DRF's throttles would raise on
every request and turn the whole API into 500s; a rate limit is a guard against abuse, not a
reason to refuse everyone, so these let the request through and log the outage instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError
from rest_framework import throttling

if TYPE_CHECKING:  # DRF imports the throttles while it loads rest_framework.views
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors, or the socket's own.
CACHE_ERRORS = (RedisError, ConnectionError, TimeoutError)


class FailOpenMixin:
    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except CACHE_ERRORS:
            logger.warning("throttle counters unreachable; letting the request through")
            return True


class AnonRateThrottle(FailOpenMixin, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(FailOpenMixin, throttling.UserRateThrottle):
    pass


class ScopedRateThrottle(FailOpenMixin, throttling.ScopedRateThrottle):
    pass
