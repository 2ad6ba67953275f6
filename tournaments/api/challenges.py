"""`/api/challenges/`: challenge any bot that accepts challenges with one of your own bots.

Anyone may read; a signed-in user creates. ``POST {"bot", "opponent", "sets"}`` starts ``sets``
(1 to 10) unrated duplicate sets at once (201). Past the daily quota the answer is 429 with the
usual error body plus ``retry_after`` (seconds, also in the ``Retry-After`` header). The list
takes ``?bot=<id>`` for the challenges a bot played, on either side.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from tournaments.api.errors import ERRORS, ErrorSerializer, error_body
from tournaments.api.filters import MAX_ID, ChallengeFilter, ListFilterBackend
from tournaments.api.league_serializers import BotRefSerializer
from tournaments.api.leagues import ID_PATTERN
from tournaments.api.pagination import KeysetPagination
from tournaments.models import Challenge
from tournaments.selectors.ladder import league_game_ids, league_set_scores
from tournaments.services.challenges import QuotaExceeded, challenge_create


class QuotaErrorSerializer(ErrorSerializer):
    retry_after = serializers.IntegerField(
        allow_null=True,
        help_text="Seconds until the quota allows one more; null: it frees as games are played.",
    )


def quota_response(error: QuotaExceeded) -> Response:
    """429 with our error body, the wait in ``retry_after`` and in ``Retry-After``."""
    body = {**error_body(str(error), "quota_exceeded"), "retry_after": error.retry_after}
    known = error.retry_after is not None  # a quota of games waiting frees as they are played
    return Response(
        body,
        status=status.HTTP_429_TOO_MANY_REQUESTS,
        headers={"Retry-After": str(error.retry_after)} if known else None,
    )


class DuelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Unrated duels users ask for (challenges, version tests): anyone reads them, newest
    first; a signed-in user starts one (`create_serializer_class` checks the body, `start`
    calls the service), within a daily quota (a 429 past it)."""

    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    pagination_class = KeysetPagination
    cursor_ordering = ("-id",)  # newest first
    create_serializer_class: type[serializers.Serializer]

    def start(self, user: Any, data: dict[str, Any]) -> Model:
        """Start one with the checked body `data`; the service's row."""
        raise NotImplementedError

    def create(self, request: Request) -> Response:
        serializer = self.create_serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            made = self.start(request.user, serializer.validated_data)
        except QuotaExceeded as error:
            return quota_response(error)
        made = self.get_queryset().get(pk=made.pk)
        return Response(self.get_serializer(made).data, status=status.HTTP_201_CREATED)


class ChallengeCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Your bot.")
    opponent = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    sets = serializers.IntegerField(min_value=1, max_value=10, default=1)


class ChallengeScoreSerializer(serializers.Serializer):
    bot = serializers.FloatField()
    opponent = serializers.FloatField()


class ChallengeSerializer(serializers.ModelSerializer):
    """A challenge and how far it got; ``score`` counts sets (a set scores 0 to 1)."""

    status = serializers.CharField(source="league.status", read_only=True)
    bot = BotRefSerializer(read_only=True)
    opponent = BotRefSerializer(read_only=True)
    creator = serializers.CharField(source="creator.username", read_only=True)
    sets_done = serializers.SerializerMethodField()
    score = serializers.SerializerMethodField()
    games = serializers.SerializerMethodField()

    class Meta:
        model = Challenge
        fields = [
            "id", "status", "creator", "bot", "opponent", "sets", "sets_done", "score", "games",
            "league", "created_at",
        ]  # fmt: skip
        read_only_fields = fields

    def _scores(self, challenge: Challenge) -> list[float]:
        cache = self.context.setdefault("scores", {})
        if challenge.pk not in cache:
            played = league_set_scores(challenge.league, challenge.bot_id)
            cache[challenge.pk] = [s.score for s in played]
        return cache[challenge.pk]

    def get_sets_done(self, challenge: Challenge) -> int:
        return len(self._scores(challenge))

    @extend_schema_field(ChallengeScoreSerializer)
    def get_score(self, challenge: Challenge) -> dict[str, float]:
        scores = self._scores(challenge)
        return {"bot": sum(scores), "opponent": len(scores) - sum(scores)}

    @extend_schema_field(
        serializers.ListField(
            child=serializers.IntegerField(),
            help_text="Ids of the latest 100 games, in schedule order; every game, a page at a "
            "time: /api/games/?league=<league>.",
        )
    )
    def get_games(self, challenge: Challenge) -> list[int]:
        return league_game_ids(challenge.league)


@extend_schema_view(
    list=extend_schema(
        summary="List challenges, newest first",
        responses={200: ChallengeSerializer(many=True), **ERRORS},
    ),
    retrieve=extend_schema(
        summary="A challenge: status, sets done, score and game ids",
        responses={200: ChallengeSerializer, **ERRORS},
    ),
    create=extend_schema(
        summary="Challenge a bot with one of yours: 1 to 10 unrated sets, started at once",
        request=ChallengeCreateSerializer,
        responses={201: ChallengeSerializer, 429: QuotaErrorSerializer, **ERRORS},
    ),
)
class ChallengeViewSet(DuelViewSet):
    queryset = Challenge.objects.select_related("creator", "bot", "opponent", "league")
    serializer_class = ChallengeSerializer
    create_serializer_class = ChallengeCreateSerializer
    filterset_class = ChallengeFilter

    def start(self, user: Any, data: dict[str, Any]) -> Challenge:
        return challenge_create(
            user=user, bot_id=data["bot"], opponent_id=data["opponent"], sets=data["sets"]
        )


router = SimpleRouter()
router.register("challenges", ChallengeViewSet, basename="challenge")
