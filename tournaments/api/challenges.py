"""`/api/challenges/`: challenge any bot that accepts challenges with one of your own bots.

Anyone may read; a signed-in user creates. ``POST {"bot", "opponent", "sets"}`` starts ``sets``
(1 to 10) unrated duplicate sets at once (201). Past the daily quota the answer is 429 with the
usual error body plus ``retry_after`` (seconds, also in the ``Retry-After`` header). The list
takes ``?bot=<id>`` for the challenges a bot played, on either side.
"""

from __future__ import annotations

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
from tournaments.api.filters import ChallengeFilter, ListFilterBackend
from tournaments.api.league_serializers import BotRefSerializer
from tournaments.api.leagues import ID_PATTERN
from tournaments.api.pagination import KeysetPagination
from tournaments.ladder_selectors import league_game_ids, league_set_scores
from tournaments.models import Challenge
from tournaments.services.challenges import QuotaExceeded, challenge_create

MAX_ID = 2**63 - 1


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
)
class ChallengeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = Challenge.objects.select_related("creator", "bot", "opponent", "league")
    serializer_class = ChallengeSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    pagination_class = KeysetPagination
    cursor_ordering = ("-id",)  # newest first
    filterset_class = ChallengeFilter

    @extend_schema(
        summary="Challenge a bot with one of yours: 1 to 10 unrated sets, started at once",
        request=ChallengeCreateSerializer,
        responses={201: ChallengeSerializer, 429: QuotaErrorSerializer, **ERRORS},
    )
    def create(self, request: Request) -> Response:
        serializer = ChallengeCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            challenge = challenge_create(
                user=request.user,
                bot_id=data["bot"],
                opponent_id=data["opponent"],
                sets=data["sets"],
            )
        except QuotaExceeded as error:
            return quota_response(error)
        challenge = self.get_queryset().get(pk=challenge.pk)
        return Response(self.get_serializer(challenge).data, status=status.HTTP_201_CREATED)


router = SimpleRouter()
router.register("challenges", ChallengeViewSet, basename="challenge")
