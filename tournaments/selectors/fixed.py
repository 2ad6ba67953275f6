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
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import QuerySet

# An id (or a key of text) no row has: where it stands in a compiled query's parameters, the
# asked one goes.
_PLACEHOLDER = 987654321987654
_TEXT_PLACEHOLDER = "fixed-rows-placeholder-987654321"


@functools.cache
def _compiled(
    build: Callable[[Any], QuerySet], limit: int | None, text: bool, vendor: str
) -> tuple[str, tuple, list, int]:
    """The SQL and parameters of ``build(placeholder)[:limit]`` and the converters of its
    columns (what ``SQLCompiler.results_iter`` applies), by column position."""
    rows = build(_TEXT_PLACEHOLDER if text else _PLACEHOLDER)
    compiler = rows[:limit].query.get_compiler(using=DEFAULT_DB_ALIAS)
    sql, params = compiler.as_sql()
    columns = [select[0] for select in compiler.select[: compiler.col_count]]
    return sql, tuple(params), list(compiler.get_converters(columns).items()), compiler.col_count


def fixed_rows(
    build: Callable[[Any], QuerySet], key: int | str, *, limit: int | None = None
) -> list[tuple]:
    """The first ``limit`` rows (all: None) of ``build(key)`` (a query of plain values:
    ``values_list``; ``key`` a row id or a text such as a pool) as tuples in the order of its
    columns, from its SQL compiled once per database vendor and limit."""
    text = isinstance(key, str)
    sql, params, converters, width = _compiled(build, limit, text, connection.vendor)
    placeholder, key = (_TEXT_PLACEHOLDER, key) if text else (_PLACEHOLDER, int(key))
    params = tuple(key if value == placeholder else value for value in params)
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


@functools.cache
def _keyless(build: Callable[[], QuerySet]) -> Callable[[Any], QuerySet]:
    return lambda _key: build()


def fixed_all(build: Callable[[], QuerySet], *, limit: int | None = None) -> list[tuple]:
    """``fixed_rows`` of a query that takes no key (such as the pools there are)."""
    return fixed_rows(_keyless(build), _TEXT_PLACEHOLDER, limit=limit)
