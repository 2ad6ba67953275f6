"""Fixed reads of one row id, compiled once per process.

A page reads a few small statements that differ only by the id of the bot (or league) it shows.
Building and compiling each as a Django query costs more than running it (0.4-1 ms a query,
docs/benchmarks-journal.md, "Uncached page reads"), on every request, for SQL that never
changes. ``fixed_rows`` compiles the query once with a placeholder id and runs its SQL with the
id asked for, its values converted as Django converts them (dates, JSON, decimals).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import QuerySet

# An id no row has: where it stands in a compiled query's parameters, the asked id goes.
_PLACEHOLDER = 987654321987654


@functools.cache
def _compiled(
    build: Callable[[int], QuerySet], limit: int | None, vendor: str
) -> tuple[str, tuple, list, int]:
    """The SQL and parameters of ``build(_PLACEHOLDER)[:limit]`` and the converters of its
    columns (what ``SQLCompiler.results_iter`` applies), by column position."""
    rows = build(_PLACEHOLDER)
    compiler = rows[:limit].query.get_compiler(using=DEFAULT_DB_ALIAS)
    sql, params = compiler.as_sql()
    columns = [select[0] for select in compiler.select[: compiler.col_count]]
    return sql, tuple(params), list(compiler.get_converters(columns).items()), compiler.col_count


def fixed_rows(
    build: Callable[[int], QuerySet], row_id: int, *, limit: int | None = None
) -> list[tuple]:
    """The first ``limit`` rows (all: None) of ``build(row_id)`` (a query of plain values:
    ``values`` or ``values_list``) as tuples in the order of its columns, from its SQL compiled
    once per database vendor and limit."""
    sql, params, converters, width = _compiled(build, limit, connection.vendor)
    params = tuple(int(row_id) if value == _PLACEHOLDER else value for value in params)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not converters:
        return [tuple(row[:width]) for row in rows]
    converted = []
    for row in rows:
        values = list(row[:width])
        for position, (functions, expression) in converters:
            for function in functions:
                values[position] = function(values[position], expression, connection)
        converted.append(tuple(values))
    return converted
