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

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as FieldValueError
from django.db import connection
from django.db.models import QuerySet
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.filters import FilterSet
from tournaments.selectors.fixed import fixed_count, fixed_values

ERROR_CURSOR = "This cursor is not one of ours: follow the list's next or previous link."


class KeysetPagination(CursorPagination):
    """Pages of ``PAGE_SIZE`` rows in the view's ``cursor_ordering`` (a unique key first, or
    a key whose ties are few: the cursor holds the key and the place among its ties)."""

    ordering = ("id",)

    def get_ordering(self, request: Request, queryset: QuerySet, view: APIView) -> tuple:
        ordering = getattr(view, "cursor_ordering", self.ordering)
        return tuple(ordering(request) if callable(ordering) else ordering)

    def decode_cursor(self, request: Request) -> Any:
        """DRF's cursor, its position checked against the ordering's first field: a cursor
        decoded by DRF may still hold a position that is no value of that field (a forged one),
        which the query would raise on."""
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({"cursor": [ERROR_CURSOR]}) from None
        if cursor is not None and cursor.position is not None:
            try:
                field = self.model._meta.get_field(self.ordering[0].lstrip("-"))
                value = field.to_python(cursor.position)
                field.run_validators(value)  # and in range
                field.get_db_prep_value(value, connection)  # and storable (a time in UTC)
            except FieldDoesNotExist:
                pass  # an annotation: the query checks it
            except (TypeError, ValueError, OverflowError, FieldValueError):
                raise ValidationError({"cursor": [ERROR_CURSOR]}) from None
        return cursor

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: APIView | None = None
    ) -> list | None:
        # The model whose field a cursor's position must be (FixedKeyset: its filter set's).
        self.model = getattr(queryset, "model", None) or queryset.filterset._meta.model
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


# A cursor's position as it stands in a compiled page query, by the ordering field's type: no
# row has this id or was made at this time.
_POSITIONS: dict[str, Any] = {
    "AutoField": 987654321988000,
    "BigAutoField": 987654321988000,
    "DateTimeField": datetime(1970, 1, 1, 0, 0, 0, 987654, tzinfo=UTC),
}
_BIGINT = range(-(2**63), 2**63)


class FixedKeyset:
    """What ``CursorPagination.paginate_queryset`` asks of a queryset (``order_by``, the
    cursor's ``filter``, a slice, ``count``), answered from SQL compiled once per process and
    shape (``selectors.fixed``: which filters are given, the ordering, whether a cursor is).

    Building and compiling a list's Django queries cost about 1 ms of the 5-6 ms a page of games
    or leagues took, on every request, for statements that differ only by their values. The
    rows are ``rows(filterset.qs)`` exactly: a filter that cannot stand as a placeholder, an
    offset cursor or a position the field refuses go through that Django query as before."""

    def __init__(self, filterset: FilterSet, rows: Callable[[QuerySet], QuerySet]) -> None:
        self.filterset = filterset
        self.rows = rows
        self.fixed = filterset.fixed_shape()
        self.ordering: tuple[str, ...] = ()
        self.cursor: dict[str, Any] = {}

    def order_by(self, *ordering: str) -> FixedKeyset:
        self.ordering = ordering
        return self

    def filter(self, **lookups: Any) -> FixedKeyset:
        self.cursor = lookups
        return self

    def count(self) -> int:
        if self.fixed is None:
            return self.filterset.qs.count()
        shape, values = self.fixed
        key = (type(self.filterset), None, shape, (), None, 0, 0)
        return fixed_count(_keyset_query, key, values)

    def __getitem__(self, window: slice) -> list[dict[str, Any]]:
        found = self._fixed(window.start or 0, window.stop)
        if found is not None:
            return found
        rows = self.rows(self.filterset.qs).order_by(*self.ordering)
        return list((rows.filter(**self.cursor) if self.cursor else rows)[window])

    def _fixed(self, start: int, stop: int) -> list[dict[str, Any]] | None:
        if self.fixed is None or start != 0:
            return None
        shape, values = self.fixed
        lookup = None
        if self.cursor:
            [(lookup, position)] = self.cursor.items()
            field = self.filterset._meta.model._meta.get_field(lookup.split("__")[0])
            placeholder = _POSITIONS.get(field.get_internal_type())
            try:
                value = field.get_prep_value(position)
            except (TypeError, ValueError, FieldValueError):
                return None  # the Django query says why, as it always did
            if placeholder is None or (isinstance(value, int) and value not in _BIGINT):
                return None
            prepared = field.get_db_prep_value(placeholder, connection, prepared=True)
            values = {**values, prepared: field.get_db_prep_value(value, connection, prepared=True)}
        key = (type(self.filterset), self.rows, shape, self.ordering, lookup, start, stop)
        return fixed_values(_keyset_query, key, values)


def _keyset_query(key: tuple) -> QuerySet:
    """The page query of a ``FixedKeyset`` shape, placeholders for its values (its filtered
    rows alone when ``rows`` is None: what is counted)."""
    filterset_class, rows, shape, ordering, lookup, start, stop = key
    queryset = filterset_class.fixed_query(shape)
    if rows is None:
        return queryset
    queryset = rows(queryset).order_by(*ordering)
    if lookup:
        field = filterset_class._meta.model._meta.get_field(lookup.split("__")[0])
        queryset = queryset.filter(**{lookup: _POSITIONS[field.get_internal_type()]})
    return queryset[start:stop]
