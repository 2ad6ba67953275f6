"""`/api/rankings/`: the public Elo ladder of a pool, and a bot's rating history for charts."""

from django.db.models import F, QuerySet, Window
from django.db.models.functions import Rank
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.errors import ERRORS
from tournaments.api.filters import ListFilterBackend, RankingFilter, RatingHistoryFilter
from tournaments.api.league_serializers import RankingSerializer, RatingChangeSerializer
from tournaments.models import Rating, RatingChange
from tournaments.selectors import ranked_ratings, rating_history


class RankingListView(ListAPIView):
    serializer_class = RankingSerializer
    permission_classes = [permissions.AllowAny]
    filter_backends = [ListFilterBackend]
    filterset_class = RankingFilter  # always one pool: classic/2p unless ?pool= says another

    def get_queryset(self) -> QuerySet[Rating]:
        rank = Window(Rank(), partition_by=[F("pool")], order_by=[F("rating").desc()])
        return ranked_ratings().annotate(rank=rank)

    @extend_schema(
        summary="The public ladder of a pool, best first",
        responses={200: RankingSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        return self.list(request)


class RatingHistoryView(ListAPIView):
    serializer_class = RatingChangeSerializer
    permission_classes = [permissions.AllowAny]
    filter_backends = [ListFilterBackend]
    filterset_class = RatingHistoryFilter

    def get_queryset(self) -> QuerySet[RatingChange]:
        return rating_history()

    @extend_schema(
        summary="A bot's rating after every rated game, oldest first (for charts)",
        responses={200: RatingChangeSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        return self.list(request)
