"""The games and leagues lists read their pages from SQL compiled once per shape
(tournaments/api/pagination.py ``FixedKeyset``, tournaments/selectors/fixed.py): every filter,
ordering and cursor gives the rows, in order, and the count that the Django query built for the
request gives, and a second request of the same shape compiles nothing."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from hypothesis import example, given, settings
from hypothesis import strategies as st
from psycopg import pq

from tests.performance.data import fill_database, rows_for_a_module
from tournaments.api.filters import FilterSet, GameFilter, LeagueFilter
from tournaments.api.pagination import FixedKeyset
from tournaments.models import Bot, Game, League, Match
from tournaments.selectors import fixed
from tournaments.selectors.leagues import games_rows, leagues_rows

pytestmark = pytest.mark.django_db


def _games_some_aborted() -> None:
    """Leagues of 4 of 6 bots, 60 games; the first league's second games aborted."""
    fill_database(games=60, bots=6, bots_per_league=4)
    aborted = Game.objects.filter(league=League.objects.order_by("id").first(), number=2)
    aborted.update(status=Game.Status.ABORTED)


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    with rows_for_a_module(django_db_blocker, _games_some_aborted):
        yield


def _keyset(filter_class: type[FilterSet], rows, params: str, *, fixed: bool) -> FixedKeyset:
    filterset = filter_class(QueryDict(params))
    assert filterset.is_valid(), filterset.errors
    keyset = FixedKeyset(filterset, rows)
    if not fixed:
        keyset.fixed = None  # the Django query built for the request, as before
    return keyset


def _read(filter_class, rows, params, ordering, cursor, window):
    answers = []
    for fixed_path in (True, False):
        keyset = _keyset(filter_class, rows, params, fixed=fixed_path).order_by(*ordering)
        if cursor:
            keyset = keyset.filter(**cursor)
        answers.append((keyset[window], keyset.count()))
    return answers


def _game_params() -> list[str]:
    league, other = League.objects.order_by("id").values_list("id", flat=True)[:2]
    match = Match.objects.filter(league_id=other).order_by("id").values_list("id", flat=True)[1]
    bot = Bot.objects.order_by("id").values_list("id", flat=True)[2]
    return [
        "",
        f"league={league}",
        f"league={other}&status=finished",
        f"league={league}&status=aborted",
        "status=pending",
        f"match={match}",
        f"bot={bot}",
        f"bot={bot}&status=finished&ordering=-id",
        f"league={league}&match={match}",
        "ordering=id",
    ]


@pytest.mark.parametrize("ordering", [("id",), ("-id",)], ids=["id", "-id"])
def test_games_pages_are_the_django_querys(filled, ordering):
    ids = list(Game.objects.order_by("id").values_list("id", flat=True))
    positions = [None, ids[0], ids[7], ids[len(ids) // 2], ids[-1], ids[-1] + 5, 0, 2**70]
    checked = 0
    for params in _game_params():
        for position in positions:
            for lookup in ("id__gt", "id__lt"):
                cursor = None if position is None else {lookup: str(position)}
                for window in (slice(0, 8), slice(3, 11)):
                    fixed_answer, django_answer = _read(
                        GameFilter, games_rows, params, ordering, cursor, window
                    )
                    assert fixed_answer == django_answer, (params, ordering, cursor, window)
                    checked += bool(fixed_answer[0])
    assert checked > 100  # most reads found rows: the comparison is not of empty pages


def test_leagues_pages_are_the_django_querys(filled):
    League.objects.filter(pk=League.objects.order_by("id").first().pk).update(
        status=League.Status.RUNNING, kind=League.Kind.LADDER
    )
    made = sorted(League.objects.values_list("created_at", flat=True))
    positions = [None, made[0], made[len(made) // 2], made[-1]]
    params_list = ["", "kind=all", "kind=ladder", "status=finished", "pool=classic/2p",
                   "pool=classic/2p&status=running&kind=all", "pool=other/4p"]  # fmt: skip
    for params in params_list:
        for position in positions:
            for lookup in ("created_at__lt", "created_at__gt"):
                cursor = None if position is None else {lookup: str(position)}
                fixed_answer, django_answer = _read(
                    LeagueFilter, leagues_rows, params, ("-created_at", "-id"), cursor, slice(0, 4)
                )
                assert fixed_answer == django_answer, (params, cursor)


def test_a_shape_is_compiled_once_and_read_in_one_statement(filled):
    leagues = list(League.objects.order_by("id").values_list("id", flat=True))
    first = _keyset(GameFilter, games_rows, f"league={leagues[0]}", fixed=True)
    first.order_by("id")[0:51]
    compiled = fixed._compiled_shape.cache_info().misses
    for league in leagues[1:]:
        keyset = _keyset(GameFilter, games_rows, f"league={league}", fixed=True).order_by("id")
        with CaptureQueriesContext(connection) as queries:
            rows = keyset[0:51]
        assert len(queries) == 1 and rows
        assert {row["league_id"] for row in rows} == {league}
    assert fixed._compiled_shape.cache_info().misses == compiled


def test_an_offset_cursor_or_a_position_the_field_refuses_reads_the_django_query(filled):
    keyset = _keyset(GameFilter, games_rows, "", fixed=True).order_by("id")
    with CaptureQueriesContext(connection) as queries:
        keyset[2:10]
    assert "OFFSET 2" in queries[0]["sql"]
    refused = _keyset(GameFilter, games_rows, "", fixed=True).order_by("id").filter(id__gt="x")
    with pytest.raises(ValueError, match="expected a number but got 'x'"):
        refused[0:5]


def test_a_lookup_that_rewrites_its_placeholder_is_refused(filled):
    def build(shape: tuple) -> QuerySet:
        return League.objects.filter(name__icontains=shape[0]).values("id")

    with pytest.raises(LookupError, match="placeholders"):
        fixed.fixed_values(build, ("placeholder-name",), {"placeholder-name": "league"})


def test_each_filter_set_has_its_own_filters_bound_to_itself(filled):
    bots = list(Bot.objects.order_by("id").values_list("id", flat=True)[:2])
    first, second = (GameFilter(QueryDict(f"bot={bot}&status=finished")) for bot in bots)
    for filterset in (first, second):
        own = filterset.filters["bot"]
        assert own is not GameFilter.base_filters["bot"] and own.parent is filterset
        assert own.filter.f is own  # its method is looked up on its own filter set
        assert filterset.is_valid()
    assert first.form.cleaned_data["bot"] == bots[0] and second.form.cleaned_data["bot"] == bots[1]
    assert not hasattr(GameFilter.base_filters["bot"], "parent")
    played = {bot: set(GameFilter(QueryDict(f"bot={bot}")).qs.values_list("id", flat=True))
              for bot in bots}  # fmt: skip
    for bot in bots:
        assert played[bot] == set(
            Game.objects.filter(seats__bot_id=bot).values_list("id", flat=True)
        )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats()
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values.map(json.dumps), st.text()))
@example('{"a": 1, "a": 2.0, "b": -0.0, "c": 1E400, "d": "\\ud800"}')
@example("\ufeff[1]")
@example("NaN")
def test_json_columns_convert_as_django_converts_them(stored):
    field = Game._meta.get_field("totals")
    parsed = fixed._json_parsed(field.from_db_value)
    assert parsed is not field.from_db_value
    assert repr(parsed(stored, None, connection)) == repr(field.from_db_value(stored, None, None))


@pytest.mark.postgres
@pytest.mark.parametrize(
    "text",
    [
        "2026-12-05 18:00:00.123456+00", "2026-12-05 18:00:00+00", "2026-12-05 18:00:00.5+05:30",
        "2000-02-29 23:59:59.999999-11", "9999-12-31 23:59:59+00", "0044-03-15 12:00:00+00 BC",
        "infinity", "-infinity",
    ],
)  # fmt: skip
def test_timestamps_read_as_djangos_loader_reads_them(text):
    answers = []
    for parsed in (True, False):
        with connection.cursor() as cursor:
            if parsed:
                fixed._timestamps_parsed(cursor.cursor)
                loader = cursor.cursor.adapters.get_loader(1184, pq.Format.TEXT)  # timestamptz
                assert loader.parses_iso
            try:
                cursor.execute("SELECT %s::timestamptz", [text])
                answers.append(repr(cursor.fetchone()[0]))
            except Exception as error:  # what Django's loader refuses, both refuse
                answers.append(type(error).__name__)
    assert answers[0] == answers[1]
