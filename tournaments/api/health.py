"""``GET /api/health/``: can this deployment reach its database, Redis and a Celery worker?

The answer is ``{"status": "ok" | "degraded", "checks": {name: {"ok": bool, ...}}}``. The HTTP
status is 503 only when the database is unreachable (the web process cannot serve anything);
a missing worker or Redis is reported as "degraded" with 200, so a load balancer keeps the web
process while the page still tells what is wrong. Each check is bounded to about a second.
"""

import logging

import redis
from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.celery_app import app as celery_app

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


class HealthView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

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
        checks = {"database": check_database(), "redis": check_redis()}
        checks["worker"] = check_worker() if checks["redis"]["ok"] else {"ok": False}
        healthy = all(check["ok"] for check in checks.values())
        http_status = 200 if checks["database"]["ok"] else 503
        return Response({"status": "ok" if healthy else "degraded", "checks": checks}, http_status)
