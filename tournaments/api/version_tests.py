"""`/api/tests/`: version tests, "is my candidate better than my baseline?" (fishtest for bots).

``POST {"candidate", "baseline", "elo0", "elo1", "alpha", "beta", "max_sets"}`` starts unrated
duplicate sets until the SPRT accepts H1 (``accepted``: the candidate is at least ``elo1``
better), accepts H0 (``rejected``: at most ``elo0``) or ``max_sets`` are played
(``inconclusive``); see ``tournaments.sprt``. The answer shows the log-likelihood ratio with its
bounds, the Elo difference with its 95 % interval, the outcome counts and the LLR after each
update (``llr_series``, for charts). Past the daily quota: 429 as for challenges.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers
from rest_framework.routers import SimpleRouter

from tournaments import sprt
from tournaments.api.challenges import MAX_ID, DuelViewSet, QuotaErrorSerializer
from tournaments.api.errors import ERRORS
from tournaments.api.filters import VersionTestFilter
from tournaments.api.league_serializers import BotRefSerializer
from tournaments.models import VersionTest
from tournaments.selectors.ladder import league_game_ids
from tournaments.services.version_tests import version_test_create


class VersionTestCreateSerializer(serializers.Serializer):
    candidate = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Your bot.")
    baseline = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    elo0 = serializers.FloatField(
        default=sprt.DEFAULTS["elo0"], help_text="H0: the candidate is this much better."
    )
    elo1 = serializers.FloatField(
        default=sprt.DEFAULTS["elo1"], help_text="H1: the candidate is this much better."
    )
    alpha = serializers.FloatField(
        default=sprt.DEFAULTS["alpha"], help_text="Chance of accepting H1 when H0 holds."
    )
    beta = serializers.FloatField(
        default=sprt.DEFAULTS["beta"], help_text="Chance of accepting H0 when H1 holds."
    )
    max_sets = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, default=sprt.DEFAULTS["max_sets"]
    )


class VersionTestSerializer(serializers.ModelSerializer):
    candidate = BotRefSerializer(read_only=True)
    baseline = BotRefSerializer(read_only=True)
    creator = serializers.CharField(source="creator.username", read_only=True)
    lower_bound = serializers.SerializerMethodField()
    upper_bound = serializers.SerializerMethodField()
    llr_series = serializers.ListField(
        source="series",
        child=serializers.ListField(child=serializers.FloatField()),
        read_only=True,
        help_text="[sets, llr] after each update, oldest first.",
    )
    counts = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Sets by the candidate's score: 0, 1/4, 1/2, 3/4, 1.",
    )
    games = serializers.SerializerMethodField()

    class Meta:
        model = VersionTest
        fields = [
            "id", "status", "creator", "candidate", "baseline", "elo0", "elo1", "alpha", "beta",
            "max_sets", "sets", "llr", "lower_bound", "upper_bound", "elo", "elo_low",
            "elo_high", "counts", "llr_series", "games", "league", "created_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_lower_bound(self, test: VersionTest) -> float:
        return sprt.bounds(test.alpha, test.beta)[0]

    def get_upper_bound(self, test: VersionTest) -> float:
        return sprt.bounds(test.alpha, test.beta)[1]

    @extend_schema_field(
        serializers.ListField(
            child=serializers.IntegerField(),
            help_text="Ids of the latest 100 games, in schedule order; every game, a page at a "
            "time: /api/games/?league=<league>.",
        )
    )
    def get_games(self, test: VersionTest) -> list[int]:
        return league_game_ids(test.league)


@extend_schema_view(
    list=extend_schema(
        summary="List version tests, newest first",
        responses={200: VersionTestSerializer(many=True), **ERRORS},
    ),
    retrieve=extend_schema(
        summary="A version test: status, LLR and bounds, Elo with its interval, LLR series",
        responses={200: VersionTestSerializer, **ERRORS},
    ),
    create=extend_schema(
        summary="Test your candidate against a baseline until the SPRT decides (unrated)",
        request=VersionTestCreateSerializer,
        responses={201: VersionTestSerializer, 429: QuotaErrorSerializer, **ERRORS},
    ),
)
class VersionTestViewSet(DuelViewSet):
    queryset = VersionTest.objects.select_related("creator", "candidate", "baseline", "league")
    serializer_class = VersionTestSerializer
    create_serializer_class = VersionTestCreateSerializer
    filterset_class = VersionTestFilter

    def start(self, user: Any, data: dict[str, Any]) -> VersionTest:
        return version_test_create(
            user=user,
            candidate_id=data["candidate"],
            baseline_id=data["baseline"],
            **{name: data[name] for name in sprt.DEFAULTS},
        )


router = SimpleRouter()
router.register("tests", VersionTestViewSet, basename="version-test")
