"""Fixed reads of one row id, compiled once per process.

A page reads a few small statements that differ only by the id of the bot (or league) it shows.
Building and compiling each as a Django query costs more than running it (0.4-1 ms a query,
docs/benchmarks-journal.md, "Uncached page reads"), on every request, for SQL that never
changes. ``fixed_rows`` compiles the query once with a placeholder id and runs its SQL with the
id asked for, its values converted as Django converts them (dates, JSON, decimals).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Hashable, Mapping
from datetime import datetime
from typing import Any

import orjson
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import JSONField, Model, QuerySet
from psycopg import postgres, pq

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
        return [tuple(row) for row in _converted(cursor.fetchall(), converters, width)]


def model_columns(model: type[Model], names: Collection[str] | None = None) -> tuple[str, ...]:
    """The columns (attribute names) of ``model``'s concrete fields, every one or those among
    ``names``, in the model's order: what ``Model.from_db`` builds an instance from (the others
    deferred)."""
    fields = model._meta.concrete_fields
    return tuple(f.attname for f in fields if names is None or f.attname in names)


def fixed_instances(
    model: type[Model], build: Callable[[Any], QuerySet], key: int, columns: tuple[str, ...]
) -> list[Any]:
    """``fixed_rows(build, key)`` (a query of ``columns``, ``model_columns``) as ``model``
    instances, as the ORM builds them from rows."""
    return [model.from_db(DEFAULT_DB_ALIAS, columns, row) for row in fixed_rows(build, key)]


def _converted(rows: list[tuple], converters: list, width: int) -> list[list | tuple]:
    """The first ``width`` values of each row, converted as Django converts its columns."""
    if not converters:
        return [row[:width] for row in rows]
    converted = []
    for row in rows:
        values = list(row[:width])
        for position, (functions, expression) in converters:
            for function in functions:
                values[position] = function(values[position], expression, connection)
        converted.append(values)
    return converted


@functools.lru_cache(maxsize=512)
def _compiled_shape(
    build: Callable[[Hashable], QuerySet], shape: Hashable, count: bool, vendor: str
) -> tuple[str, tuple, list, tuple[str, ...]]:
    """The SQL and parameters of ``build(shape)`` (its row count's with ``count``), the
    converters of its columns by position and the names ``values()`` gives them."""
    query = build(shape).query
    if count:
        inner = query.chain()
        inner.clear_ordering(force=True)
        inner.clear_select_clause()
        inner.add_fields(["pk"])
        sql, params = inner.get_compiler(using=DEFAULT_DB_ALIAS).as_sql()
        return f"SELECT COUNT(*) FROM ({sql}) counted", tuple(params), [], ()
    compiler = query.get_compiler(using=DEFAULT_DB_ALIAS)
    sql, params = compiler.as_sql()
    columns = [select[0] for select in compiler.select[: compiler.col_count]]
    if query.selected:
        names = tuple(query.selected)
    else:
        names = (*query.extra_select, *query.values_select, *query.annotation_select)
    converters = [
        (position, ([_json_parsed(function) for function in functions], expression))
        for position, (functions, expression) in compiler.get_converters(columns).items()
    ]
    return sql, tuple(params), converters, names


_LONG_NUMBER = re.compile(r"[0-9]{19}")


def _json_parsed(converter: Callable) -> Callable:
    """``converter``, or for a ``JSONField`` without a decoder of its own the same conversion
    with orjson's parser (2 µs a value less; a page of games reads a hundred): what orjson
    refuses (NaN, lone surrogates, a string not JSON) goes to Django's, and so does a text with
    19 digits in a row (orjson reads an integer past 64 bits as a float)."""
    if getattr(converter, "__func__", None) is not JSONField.from_db_value:
        return converter
    if converter.__self__.decoder is not None:
        return converter

    def parsed(value: Any, expression: Any, connection: Any) -> Any:
        if isinstance(value, str) and (len(value) < 19 or not _LONG_NUMBER.search(value)):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        return converter(value, expression, connection)

    return parsed


def _shape_params(params: tuple, values: Mapping[Hashable, Any]) -> tuple:
    """``params`` with each placeholder (a key of ``values``) replaced by its value; a compiled
    shape that lost one of them (a lookup that rewrites its value) is refused."""
    missing = [placeholder for placeholder in values if placeholder not in params]
    if missing:
        raise LookupError(f"placeholders not among the compiled parameters: {missing!r}")
    return tuple(
        values[value] if isinstance(value, Hashable) and value in values else value
        for value in params
    )


def fixed_values(
    build: Callable[[Hashable], QuerySet], shape: Hashable, values: Mapping[Hashable, Any]
) -> list[dict[str, Any]]:
    """The rows of ``build(shape)`` (a ``values()`` query), as ``values()`` gives them, from
    its SQL compiled once per process and ``shape``: ``build`` writes each value that varies
    between requests as a placeholder, a key of ``values``, whose value takes its place. For
    the lists: their filters and cursor vary by value, the shape by which of them are given."""
    sql, params, converters, names = _compiled_shape(build, shape, False, connection.vendor)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            _timestamps_parsed(cursor.cursor)
        cursor.execute(sql, _shape_params(params, values))
        rows = _converted(cursor.fetchall(), converters, len(names))
    return [dict(zip(names, row, strict=True)) for row in rows]


def fixed_count(
    build: Callable[[Hashable], QuerySet], shape: Hashable, values: Mapping[Hashable, Any]
) -> int:
    """How many rows ``build(shape)`` has (as ``fixed_values``: compiled once per shape)."""
    sql, params, _, _ = _compiled_shape(build, shape, True, connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, _shape_params(params, values))
        return cursor.fetchone()[0]


def _timestamps_parsed(cursor: Any) -> None:
    """Have this psycopg ``cursor`` read a ``timestamptz`` in UTC with ``fromisoformat``: its
    loader's regular expression is most of a page's row conversion (150 timestamps a page of
    leagues). Django's loader answers the rest, and what both answer is the same datetime."""
    oid = postgres.types["timestamptz"].oid
    current = cursor.adapters.get_loader(oid, pq.Format.TEXT)
    if current is not None and not getattr(current, "parses_iso", False):
        cursor.adapters.register_loader(oid, _iso_loader(current))


@functools.cache
def _iso_loader(django_loader: type) -> type:
    """``django_loader`` (a UTC or naive ``timestamptz`` loader: its wall time, its tzinfo
    replaced by the connection's) reading ``... +00`` texts with ``datetime.fromisoformat``."""

    class IsoLoader(django_loader):  # type: ignore[misc, valid-type]
        parses_iso = True

        def load(self, data: Any) -> Any:
            text = bytes(data)
            if text.endswith(b"+00"):
                try:
                    wall = datetime.fromisoformat(text[:-3].decode())
                except ValueError:
                    pass
                else:
                    return wall.replace(tzinfo=self.timezone)
            return super().load(data)

    return IsoLoader


@functools.cache
def _keyless(build: Callable[[], QuerySet]) -> Callable[[Any], QuerySet]:
    return lambda _key: build()


def fixed_all(build: Callable[[], QuerySet], *, limit: int | None = None) -> list[tuple]:
    """``fixed_rows`` of a query that takes no key (such as the pools there are)."""
    return fixed_rows(_keyless(build), _TEXT_PLACEHOLDER, limit=limit)
