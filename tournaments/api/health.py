"""``GET /api/health/``: can this deployment reach its database, Redis and a Celery worker?

The answer is ``{"status": "ok" | "degraded", "checks": {name: {"ok": bool, ...}}}``. The HTTP
status is 503 only when the database is unreachable (the web process cannot serve anything);
a missing worker or Redis is reported as "degraded" with 200, so a load balancer keeps the web
process while the page still tells what is wrong. Each check is bounded to about a second.

Anyone may ask, so asking must cost next to nothing: each web process answers from its last
look for ``ESCOBA_HEALTH_CACHE_S`` seconds (one look at a time; the others wait for it and share
it), and each address is throttled (``ESCOBA_THROTTLE_HEALTH``, a 429 past it).
"""

import logging
import threading
import time

import redis
from django.conf import settings
from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.celery_app import app as celery_app
from tournaments.api.throttling import HealthThrottle

logger = logging.getLogger(__name__)

CHECK_TIMEOUT_SECONDS = 1.0


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "unreachable"
        logger.warning("health: database unreachable: %s", error)
        return {"ok": False, "error": type(error).__name__}
    return {"ok": True, "vendor": connection.vendor}


def check_redis() -> dict:
    """Ping the broker Redis (the URL Celery uses, which is also the cache's)."""
    client = redis.Redis.from_url(
        celery_app.conf.broker_url,
        socket_connect_timeout=CHECK_TIMEOUT_SECONDS,
        socket_timeout=CHECK_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    except redis.RedisError as error:
        return {"ok": False, "error": type(error).__name__}
    finally:
        client.close()
    return {"ok": True}


def check_worker() -> dict:
    """Ask the workers to answer a ping; returns at the first answer."""
    try:
        replies = celery_app.control.ping(timeout=CHECK_TIMEOUT_SECONDS, limit=1)
    except Exception as error:  # broker errors surface as many kombu/redis types
        return {"ok": False, "error": type(error).__name__}
    return {"ok": bool(replies), "workers": [name for reply in replies for name in reply]}


def health_look() -> tuple[dict, int]:
    """Look at the database, Redis and a worker now: the answer's body and HTTP status."""
    checks = {"database": check_database(), "redis": check_redis()}
    checks["worker"] = check_worker() if checks["redis"]["ok"] else {"ok": False}
    healthy = all(check["ok"] for check in checks.values())
    http_status = 200 if checks["database"]["ok"] else 503
    return {"status": "ok" if healthy else "degraded", "checks": checks}, http_status


class _LastLook:
    """This process's last look and when it was taken (``time.monotonic``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.taken = -float("inf")
        self.answer: tuple[dict, int] = ({}, 503)

    def get(self) -> tuple[dict, int]:
        with self.lock:
            if time.monotonic() - self.taken >= settings.ESCOBA_HEALTH_CACHE_S:
                self.answer = health_look()
                self.taken = time.monotonic()
            return self.answer


last_look = _LastLook()


class HealthView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [HealthThrottle]

    @extend_schema(
        responses={
            (200, "application/json"): inline_serializer(
                "Health",
                {"status": serializers.CharField(), "checks": serializers.DictField()},
            )
        },
        summary="Reachability of the database, Redis and a Celery worker",
    )
    def get(self, request: Request) -> Response:
        body, http_status = last_look.get()
        return Response(body, http_status)
