"""Keyset (cursor) pagination for the lists that grow with play: games, matches, leagues, a
bot's rating history, challenges and version tests.

A page is read from an index after the last row of the page before (DRF's ``CursorPagination``:
``next`` and ``previous`` are links carrying an opaque ``cursor``), so the thousandth page costs
what the first does; an ``OFFSET`` would read and drop every row before it. The envelope is the
one the API always had, ``{"count", "next", "previous", "results"}``: a view says how to count
its list cheaply (``list_count``: the running totals of ``tournaments.models.tallies`` for
games), else the filtered rows are counted.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

ERROR_CURSOR = "This cursor is not one of ours: follow the list's next or previous link."


class KeysetPagination(CursorPagination):
    """Pages of ``PAGE_SIZE`` rows in the view's ``cursor_ordering`` (a unique key first, or
    a key whose ties are few: the cursor holds the key and the place among its ties)."""

    ordering = ("id",)

    def get_ordering(self, request: Request, queryset: QuerySet, view: APIView) -> tuple:
        ordering = getattr(view, "cursor_ordering", self.ordering)
        return tuple(ordering(request) if callable(ordering) else ordering)

    def decode_cursor(self, request: Request) -> Any:
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise ValidationError({"cursor": [ERROR_CURSOR]}) from None

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: APIView | None = None
    ) -> list | None:
        counter = getattr(view, "list_count", None)
        count = counter(queryset) if counter else None
        self.count = queryset.count() if count is None else count
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data: list) -> Response:
        return Response(
            {
                "count": self.count,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        answer = super().get_paginated_response_schema(schema)
        answer["properties"] = {
            "count": {"type": "integer", "example": 123},
            **answer["properties"],
        }
        answer["required"] = ["count", *answer.get("required", [])]
        return answer
