"""Cached anonymous reads for DRF views (see ``tournaments.read_cache``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.read_cache import cached_read

ROW_ID = re.compile(r"[1-9][0-9]{0,17}")


def id_param(request: Request, name: str) -> str | None:
    """The query parameter ``name`` when it is a row id, else None (an invalid one is a 400
    that is never cached, and must not make a version key of its own)."""
    value = request.query_params.get(name, "")
    return value if ROW_ID.fullmatch(value) else None


def api_read(
    view: APIView, request: Request, scopes: list[str], handler: Callable[[], Response]
) -> HttpResponse:
    """``handler()``'s answer, rendered, from the cache while ``scopes`` are unchanged."""

    def build() -> HttpResponse:
        response = view.finalize_response(request, handler())
        response.render()
        return response

    return cached_read(request, scopes, build, variant=request.accepted_renderer.format)
