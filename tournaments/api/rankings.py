"""`/api/rankings/`: the published ranking of a pool, and a bot's rating history for charts.

Both come from each pool's latest rating fit (``tournaments.rating_selectors``): one rating per
bot per pool, as JSON numbers, with its 95 % interval.
"""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.caching import api_read
from tournaments.api.errors import ERRORS
from tournaments.api.filters import ListFilterBackend, RankingFilter, RatingHistoryFilter
from tournaments.api.league_serializers import RankingSerializer, RatingPointSerializer
from tournaments.models import Rating, RatingPoint
from tournaments.rating_selectors import published_ratings, rating_points


class RankingListView(ListAPIView):
    serializer_class = RankingSerializer
    permission_classes = [permissions.AllowAny]
    filter_backends = [ListFilterBackend]
    filterset_class = RankingFilter  # always one pool: classic/2p unless ?pool= says another

    def get_queryset(self) -> QuerySet[Rating]:
        return published_ratings()

    @extend_schema(
        summary="The published ranking of a pool: established bots best first, then provisional",
        responses={200: RankingSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        # Any pool's fit bumps "ratings": no version key per pool name a client may send.
        return api_read(self, request, ["ratings"], lambda: self.list(request))


class RatingHistoryView(ListAPIView):
    serializer_class = RatingPointSerializer
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
