"""``GET /metrics``: the arena's figures in the Prometheus text format (tournaments/metrics.py),
for the operator only: clients in ``ESCOBA_METRICS_NETWORKS`` (the client address found by the
throttles' rule, trusting ``ESCOBA_TRUSTED_PROXIES`` proxies' ``X-Forwarded-For``) or with
``Authorization: Bearer <ESCOBA_METRICS_TOKEN>``; anyone else gets a 403 in the API's error body.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from rest_framework.throttling import BaseThrottle

from tournaments import messages
from tournaments.api.errors import error_body
from tournaments.metrics import address_allowed, metrics_registry


def client_address(request: HttpRequest) -> str:
    """The client's address as the throttles count it (DRF's ``NUM_PROXIES`` rule)."""
    return BaseThrottle().get_ident(request)


def _token_given(request: HttpRequest) -> bool:
    token = settings.ESCOBA_METRICS_TOKEN
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given, token)


def metrics_allowed(request: HttpRequest) -> bool:
    return _token_given(request) or address_allowed(client_address(request))


def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        return JsonResponse(error_body(messages.METRICS_FORBIDDEN, "forbidden"), status=403)
    if request.method not in ("GET", "HEAD"):
        response = JsonResponse(
            error_body(messages.METRICS_METHOD, "method_not_allowed"), status=405
        )
        response["Allow"] = "GET, HEAD"
        return response
    return HttpResponse(generate_latest(metrics_registry()), content_type=CONTENT_TYPE_LATEST)
