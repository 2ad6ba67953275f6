"""Fixed reads of one row id, compiled once per process.

A page reads a few small statements that differ only by the id of the bot (or league) it shows.
Building and compiling each as a Django query costs more than running it (0.4-1 ms a query,
docs/benchmarks-journal.md, "Uncached page reads"), on every request, for SQL that never
changes. ``fixed_rows`` compiles the query once with a placeholder id and runs its SQL with the
id asked for. Only for queries whose columns need no conversion from the database's values
(integers, text): the rows come as the database driver gives them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.db import connection
from django.db.models import QuerySet

# An id no row has: where it stands in a compiled query's parameters, the asked id goes.
_PLACEHOLDER = 987654321987654


@functools.cache
def _compiled(build: Callable[[int], QuerySet], vendor: str) -> tuple[str, tuple]:
    return build(_PLACEHOLDER).query.sql_with_params()


def fixed_rows(build: Callable[[int], QuerySet], row_id: int) -> list[tuple]:
    """The rows of ``build(row_id)`` (a query of plain values: ``values`` or ``values_list``)
    in the order of its columns, from its SQL compiled once per database vendor."""
    sql, params = _compiled(build, connection.vendor)
    params = tuple(int(row_id) if value == _PLACEHOLDER else value for value in params)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
