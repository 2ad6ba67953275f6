"""`/api/rankings/`: the published ranking of a pool, and a bot's rating history for charts.

Both come from the pool's latest rating fit (``tournaments.rating_selectors``): one rating per bot
per pool, as JSON numbers, with its 95 % interval.
"""

import re

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.league_serializers import RankingSerializer, RatingPointSerializer
from tournaments.api.leagues import ERRORS, id_param
from tournaments.models import Bot, Rating, RatingPoint
from tournaments.rating_selectors import bot_rating_history, ranking, rating_row

DEFAULT_POOL = "classic/2p"
POOL_PATTERN = re.compile(r"[a-z0-9_]{1,40}/[234]p")
ERROR_POOL = "A pool is a ruleset and a table size, e.g. classic/2p."
ERROR_BOT_REQUIRED = "Which bot? Give its id."
ERROR_UNKNOWN_BOT = "No bot with this id."


def pool_param(request: Request, required: bool = False) -> str | None:
    pool = request.query_params.get("pool")
    if not pool:
        return DEFAULT_POOL if required else None
    if not POOL_PATTERN.fullmatch(pool):
        raise ValidationError({"pool": [ERROR_POOL]})
    return pool


class RankingListView(ListAPIView):
    serializer_class = RankingSerializer
    permission_classes = [permissions.AllowAny]

    def get_queryset(self) -> QuerySet[Rating]:
        return ranking(pool_param(self.request, required=True))

    @extend_schema(
        summary="The published ranking of a pool: established bots best first, then provisional",
        parameters=[OpenApiParameter("pool", str, description="e.g. classic/2p (the default).")],
        responses={200: RankingSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        rows = [rating_row(rating) for rating in page]
        return self.get_paginated_response(RankingSerializer(rows, many=True).data)


class RatingHistoryView(ListAPIView):
    serializer_class = RatingPointSerializer
    permission_classes = [permissions.AllowAny]

    def get_queryset(self) -> QuerySet[RatingPoint]:
        bot_id = id_param(self.request, "bot")
        if bot_id is None:
            raise ValidationError({"bot": [ERROR_BOT_REQUIRED]})
        bot = Bot.objects.filter(pk=bot_id).first()
        if bot is None:
            raise ValidationError({"bot": [ERROR_UNKNOWN_BOT]})
        return bot_rating_history(bot, pool_param(self.request))

    @extend_schema(
        summary="A bot's rating after every fit that moved it, oldest first, every version",
        parameters=[
            OpenApiParameter("bot", int, required=True),
            OpenApiParameter("pool", str, description="Only this pool, e.g. classic/2p."),
        ],
        responses={200: RatingPointSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        return self.list(request)
