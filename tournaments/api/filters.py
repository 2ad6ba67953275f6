"""Query filters of the API's lists (django-filter), with our own words for bad values.

A bad value is a 400 with the API's error body naming the parameter (``tournaments.api.errors``),
never a 500 and never a library's message; an unknown parameter is ignored. drf-spectacular lists
every filter in the OpenAPI schema. Filters apply to lists only: a detail route ignores them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from django import forms
from django.db.models import Q, QuerySet
from django.http import QueryDict
from django_filters import rest_framework as filters
from django_filters.utils import translate_validation
from rest_framework.request import Request
from rest_framework.views import APIView

from games.ratings.ranking import DEFAULT_POOL
from tournaments.models import (
    Bot,
    Challenge,
    Game,
    League,
    Match,
    Rating,
    RatingPoint,
    VersionTest,
)
from tournaments.observers import rated_games_in_play

ERROR_BAD_ID = "A positive integer id is required."
ERROR_POOL = "A pool is a ruleset and a table size, e.g. classic/2p."
ERROR_POOL_KNOWN = ERROR_POOL + " Pools here: {pools}."
ERROR_POOL_NONE = ERROR_POOL + " No league has been played here yet, so there is no pool."
ERROR_BOT_REQUIRED = "Which bot? Give its id."
ERROR_UNKNOWN_BOT = "No bot with this id."
ERROR_STATUS = "One of {choices}."

POOL_PATTERN = re.compile(r"[a-z0-9_]{1,40}/[234]p")
MAX_ID = 2**63 - 1


class ListFilterBackend(filters.DjangoFilterBackend):
    """django-filter's backend for list actions only, so ``?league=x`` on a detail route is
    ignored as it always was rather than turning a found object into a 404."""

    def filter_queryset(self, request: Request, queryset: QuerySet, view: APIView) -> QuerySet:
        if getattr(view, "action", "list") != "list":
            return queryset
        return super().filter_queryset(request, queryset, view)

    def filterset_checked(self, request: Request, queryset: QuerySet, view: APIView) -> FilterSet:
        """The view's filter set for ``request``, its values checked: a bad one is the same 400
        as ``filter_queryset``'s, and nothing is filtered yet (see ``FilterSet.fixed_shape``)."""
        filterset = self.get_filterset(request, queryset, view)
        if not filterset.is_valid() and self.raise_exception:
            raise translate_validation(filterset.errors)
        return filterset


class _CopiedFilters(dict):
    """A filter set's filters, copied for each request one level deep, not deeply: django-filter
    deep-copies them (and a form its fields) on every request, a tenth of a filtered list's CPU,
    though only the attributes it sets on each filter (``model``, ``parent``) differ by request.
    A filter with a ``method`` gets its own binding to that method (``FilterMethod``)."""

    def __deepcopy__(self, memo: dict) -> dict:
        copies = {}
        for name, given in self.items():
            copied = copy.copy(given)
            if copied.method is not None:
                copied.method = copied.method  # a FilterMethod of the copy, not of the original
            copies[name] = copied
        return copies


class _SharedFields(dict):
    """A form's fields, the same objects for every form: checking a value changes no field (a
    form's values and errors are its own). Not for a model choice, whose field holds a query."""

    def __deepcopy__(self, memo: dict) -> dict:
        return dict(self)


class FilterSet(filters.FilterSet):
    """django-filter's, with its form class made once per filter set: django-filter makes a new
    class, and the fields in it, for every request, a good part of a filtered list's CPU; and
    neither the filters nor the form's fields copied deeply for each request (``_CopiedFilters``,
    ``_SharedFields``): no request sees another's values all the same."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        own = type(self)
        if not isinstance(own.__dict__.get("base_filters"), _CopiedFilters):
            own.base_filters = _CopiedFilters(own.base_filters)
        super().__init__(*args, **kwargs)

    def get_form_class(self) -> type[forms.Form]:
        own = type(self)
        form_class = own.__dict__.get("_form_class")
        if form_class is None:
            form_class = super().get_form_class()
            fields = form_class.base_fields.values()
            if not any(isinstance(field, forms.ModelChoiceField) for field in fields):
                form_class.base_fields = _SharedFields(form_class.base_fields)
            own._form_class = form_class
        return form_class

    def fixed_shape(self) -> tuple[tuple[tuple[str, str], ...], dict[Any, Any]] | None:
        """The checked values as the shape of a query compiled once (``selectors.fixed``):
        ``(name, text)`` pairs, the text a choice as given or a placeholder for an id or a
        pool, and each placeholder's value; None when a filter of another kind is given. An
        ordering is left out: the pagination orders the list itself."""
        shape, values = [], {}
        for name, value in self.form.cleaned_data.items():
            if value in (None, "", []):
                continue
            given = self.filters[name]
            if isinstance(given, filters.OrderingFilter):
                continue
            if isinstance(given, filters.ModelChoiceFilter):
                return None
            if isinstance(given, filters.ChoiceFilter):
                shape.append((name, value))
            elif isinstance(given, IdFilter):
                placeholder = FIXED_ID + len(values)
                shape.append((name, str(placeholder)))
                values[placeholder] = value
            elif isinstance(given, PoolFilter):
                placeholder = FIXED_POOL.format(len(values))
                shape.append((name, placeholder))
                values[placeholder] = value
            else:
                return None
        return tuple(shape), values

    @classmethod
    def fixed_query(cls, shape: tuple[tuple[str, str], ...]) -> QuerySet:
        """The filtered query of a ``fixed_shape``, its placeholders in place of the values."""
        filterset = cls(_query_dict(shape))
        if not filterset.is_valid():
            raise ValueError(f"a fixed shape that does not validate: {shape!r}")
        return filterset.qs


# Placeholders no id or pool given has: ids past any row's, a pool no ruleset is named.
FIXED_ID = 987654321987000
FIXED_POOL = "fixedrowsplaceholder{}/2p"


def _query_dict(pairs: tuple[tuple[str, str], ...]) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, text in pairs:
        data[name] = text
    return data


class IdField(forms.Field):
    """A positive 64-bit id written in ASCII digits, as in our URLs."""

    default_error_messages = {"invalid": ERROR_BAD_ID}

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        text = str(value)
        if not (text.isascii() and text.isdigit() and 0 < int(text) <= MAX_ID):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return int(text)


class PoolField(forms.Field):
    """A rating pool: a ruleset's name and a table size, ``classic/2p``."""

    default_error_messages = {"invalid": ERROR_POOL}

    def to_python(self, value: Any) -> str | None:
        if value in self.empty_values:
            return None
        if not POOL_PATTERN.fullmatch(str(value)):
            pools = known_pools()
            message = ERROR_POOL_KNOWN.format(pools=", ".join(pools)) if pools else ERROR_POOL_NONE
            raise forms.ValidationError(message, code="invalid")
        return str(value)


def known_pools() -> list[str]:
    """The pools that exist: every league's, and every published rating's, alphabetically.
    Read only to tell a client that asked for a malformed pool which ones it could ask for."""
    leagues = League.objects.values_list("pool", flat=True)
    ratings = Rating.objects.values_list("pool", flat=True)
    return sorted(set(leagues.distinct()) | set(ratings.distinct()))


class BotField(forms.ModelChoiceField):
    """A bot that exists, by id: a bad id and an unknown bot are told apart."""

    default_error_messages = {
        "required": ERROR_BOT_REQUIRED,
        "invalid_choice": ERROR_UNKNOWN_BOT,
    }

    def to_python(self, value: Any) -> Bot | None:
        return super().to_python(IdField(required=False).clean(value))


class IdFilter(filters.Filter):
    field_class = IdField


class BotFilter(filters.ModelChoiceFilter):
    field_class = BotField


class PoolFilter(filters.Filter):
    field_class = PoolField


def status_filter(model: type, help_text: str) -> filters.ChoiceFilter:
    values = model.Status.values
    return filters.ChoiceFilter(
        choices=model.Status.choices,
        help_text=help_text,
        error_messages={"invalid_choice": ERROR_STATUS.format(choices=", ".join(values))},
    )


ALL_KINDS = "all"
KIND_CHOICES = [*League.Kind.choices, (ALL_KINDS, ALL_KINDS)]


class LeagueFilter(FilterSet):
    status = status_filter(League, "Only leagues in this state.")
    pool = PoolFilter(help_text="Only leagues of this rating pool, e.g. classic/2p.")
    kind = filters.ChoiceFilter(
        choices=KIND_CHOICES,
        method="filter_kind",
        help_text="league (the default): round robins; ladder, challenge, test: the leagues "
        "behind the ladder, challenges and version tests; all: every one.",
        error_messages={
            "invalid_choice": ERROR_STATUS.format(choices=", ".join(v for v, _ in KIND_CHOICES))
        },
    )

    class Meta:
        model = League
        fields = ["status", "pool", "kind"]

    @property
    def qs(self) -> QuerySet[League]:
        queryset = super().qs
        if not self.form.cleaned_data.get("kind"):  # absent: round robins only
            queryset = queryset.filter(kind=League.Kind.LEAGUE)
        return queryset

    def filter_kind(self, queryset: QuerySet[League], name: str, value: str) -> QuerySet[League]:
        return queryset if value == ALL_KINDS else queryset.filter(kind=value)


class MatchFilter(FilterSet):
    league = IdFilter(field_name="league_id", help_text="Only this league's matches.")
    status = status_filter(Match, "Only matches in this state.")

    class Meta:
        model = Match
        fields = ["league", "status"]


class GameFilter(FilterSet):
    league = IdFilter(field_name="league_id", help_text="Only this league's games.")
    match = IdFilter(field_name="match_id", help_text="Only this match's games.")
    bot = IdFilter(
        method="filter_bot",
        help_text=(
            "Only games this bot played or plays; a rated game being played is left out (nobody "
            "is told who sits at it before it ends)."
        ),
    )
    status = status_filter(Game, "Only games in this state.")
    ordering = filters.OrderingFilter(
        fields=(("id", "id"),),
        help_text="id: oldest first; -id: newest first. Without it: newest first with bot "
        "(a bot's latest games), oldest first otherwise (a league's schedule in order).",
        error_messages={"invalid_choice": ERROR_STATUS.format(choices="id, -id")},
    )

    class Meta:
        model = Game
        fields = ["league", "match", "bot", "status"]

    @property
    def qs(self) -> QuerySet[Game]:
        queryset = super().qs
        if not self.form.cleaned_data.get("ordering") and self.form.cleaned_data.get("bot"):
            queryset = queryset.order_by("-id")
        return queryset

    def filter_bot(self, queryset: QuerySet, name: str, value: int) -> QuerySet:
        return queryset.filter(seats__bot_id=value).exclude(rated_games_in_play()).distinct()


class RankingFilter(FilterSet):
    """The ladder is always of one pool: ``classic/2p`` unless ``pool`` says another."""

    pool = PoolFilter(help_text=f"The rating pool, e.g. {DEFAULT_POOL} (the default).")

    class Meta:
        model = Rating
        fields = ["pool"]

    def __init__(self, data: QueryDict | None = None, *args: Any, **kwargs: Any) -> None:
        if data is not None and not data.get("pool"):
            data = data.copy()
            data["pool"] = DEFAULT_POOL
        super().__init__(data, *args, **kwargs)


class RatingHistoryFilter(FilterSet):
    bot = BotFilter(queryset=Bot.objects.all(), required=True, help_text="The bot (required).")
    pool = PoolFilter(help_text="Only this pool, e.g. classic/2p.")

    class Meta:
        model = RatingPoint
        fields = ["bot", "pool"]


class ChallengeFilter(FilterSet):
    bot = IdFilter(method="filter_bot", help_text="Only challenges this bot played, either side.")

    class Meta:
        model = Challenge
        fields = ["bot"]

    def filter_bot(self, queryset: QuerySet, name: str, value: int) -> QuerySet:
        return queryset.filter(Q(bot_id=value) | Q(opponent_id=value))


class VersionTestFilter(FilterSet):
    bot = IdFilter(method="filter_bot", help_text="Only tests this bot played in, either side.")

    class Meta:
        model = VersionTest
        fields = ["bot"]

    def filter_bot(self, queryset: QuerySet, name: str, value: int) -> QuerySet:
        return queryset.filter(Q(candidate_id=value) | Q(baseline_id=value))
