"""`/api/rankings/`: the published ranking of a pool, and a bot's rating history for charts.

Both come from each pool's latest rating fit (``tournaments.selectors.ratings``): one rating per
bot per pool, as JSON numbers, with its 95 % interval.
"""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from games.ratings.ranking import DEFAULT_POOL
from tournaments.api.caching import api_read
from tournaments.api.errors import ERRORS
from tournaments.api.filters import (
    POOL_PATTERN,
    ListFilterBackend,
    RankingFilter,
    RatingHistoryFilter,
)
from tournaments.api.league_serializers import RankingSerializer, RatingPointSerializer
from tournaments.api.pagination import KeysetPagination
from tournaments.api.rows import ranking_represent
from tournaments.models import Rating, RatingPoint
from tournaments.selectors.play import people_records
from tournaments.selectors.ratings import published_ratings, ranking_table, rating_points


class PeopleRecordSerializer(serializers.Serializer):
    games = serializers.IntegerField(source="people_games")
    wins = serializers.IntegerField(source="people_wins")
    draws = serializers.IntegerField(source="people_draws")
    losses = serializers.SerializerMethodField()

    def get_losses(self, rating: Rating) -> int:
        return rating.people_games - rating.people_wins - rating.people_draws


class RankingRowSerializer(RankingSerializer):
    people = PeopleRecordSerializer(
        source="*", help_text="Unrated games against people, from the bot's side."
    )

    class Meta(RankingSerializer.Meta):
        fields = [*RankingSerializer.Meta.fields, "people"]


# ?sort=people: most wins against people first (then most games, then the ranking's order).
SORTS = {"people"}


class RankingListView(ListAPIView):
    serializer_class = RankingRowSerializer
    permission_classes = [permissions.AllowAny]
    filter_backends = [ListFilterBackend]
    filterset_class = RankingFilter  # always one pool: classic/2p unless ?pool= says another

    def get_queryset(self) -> QuerySet[Rating]:
        return published_ratings()

    def _pool(self) -> str:
        """The pool asked for (``classic/2p`` when none is): a well-formed one is taken as it is,
        anything else goes through ``RankingFilter``, whose 400 names the pools there are. The
        filter set made and checked on every request was a good part of the ranking's CPU."""
        pool = self.request.query_params.get("pool") or DEFAULT_POOL
        if not POOL_PATTERN.fullmatch(pool):
            self.filter_queryset(self.get_queryset())  # raises the API's 400 for the pool
        return pool

    def _list(self) -> Response:
        """The pool's ranking and the bots' records against people, read in two fixed
        statements (``ranking_table``, ``people_records``), then sorted by the records when
        asked; shown by ``api.rows`` exactly as ``RankingRowSerializer``."""
        pool = self._pool()
        records = people_records()
        rows = [
            ranking_represent(row, records.get(row["bot_id"])) for row in ranking_table(pool=pool)
        ]
        if self.request.query_params.get("sort", "") in SORTS:
            rows.sort(key=lambda r: (-r["people"]["wins"], -r["people"]["games"], r["rank"]))
        return self.get_paginated_response(self.paginate_queryset(rows))

    @extend_schema(
        summary="The published ranking of a pool: established bots best first, then provisional",
        parameters=[
            OpenApiParameter(
                "sort", str, enum=list(SORTS), description="people: by wins against people."
            )
        ],
        responses={200: RankingSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        # Any pool's fit bumps "ratings": no version key per pool name a client may send.
        return api_read(self, request, ["ratings"], self._list)


class RatingHistoryView(ListAPIView):
    serializer_class = RatingPointSerializer
    pagination_class = KeysetPagination
    cursor_ordering = ("id",)  # oldest first
    permission_classes = [permissions.AllowAny]
    filter_backends = [ListFilterBackend]
    filterset_class = RatingHistoryFilter

    def get_queryset(self) -> QuerySet[RatingPoint]:
        return rating_points()

    @extend_schema(
        summary="A bot's rating after every fit that moved it, oldest first, every version",
        responses={200: RatingPointSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        # Points are written only by fits, and every fit bumps "ratings".
        return api_read(self, request, ["ratings"], lambda: self.list(request))
