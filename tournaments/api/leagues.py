"""`/api/leagues/` and `/api/matches/`: create, enter, run and follow leagues.

Anyone may read. Signed-in users create leagues (enough distinct bots for a table, a name not
taken); only a league's creator starts, pauses, resumes or cancels it (403 otherwise), the
creator or staff may delete one that never started, and a bot's owner enrols it into an open
league. Every
write goes through ``tournaments.services.league_*``; its ``ValidationError`` becomes a 400 with
a message per field (see ``tournaments.api.errors``). Starting and resuming need the match queue:
while Redis is unreachable they answer 503 and change nothing.
"""

from django.db.models import Prefetch
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from games.engine import DEFAULT_PRESET
from tournaments.api.caching import api_read
from tournaments.api.errors import ERRORS, QUEUE_ERRORS
from tournaments.api.filters import LeagueFilter, ListFilterBackend, MatchFilter
from tournaments.api.league_serializers import (
    CrosstableSerializer,
    EntryCreateSerializer,
    LeagueCreateSerializer,
    LeagueDetailSerializer,
    LeagueSerializer,
    MatchSerializer,
)
from tournaments.api.pagination import FixedKeyset, KeysetPagination
from tournaments.api.renderers import RENDERERS
from tournaments.api.rows import league_detail_represent, leagues_represent
from tournaments.models import Bot, Game, League, Match
from tournaments.selectors.leagues import league_crosstable, league_detail_rows, leagues_rows
from tournaments.services.league_creation import league_create, league_enrol
from tournaments.services.league_schedules import league_start
from tournaments.services.league_states import (
    league_cancel,
    league_delete,
    league_pause,
    league_resume,
)

# Ids are positive 64-bit integers; anything else is simply not found (404, never a crash).
ID_PATTERN = "[1-9][0-9]{0,17}"
ERROR_UNKNOWN_BOT = "No bot with this id."


@extend_schema_view(
    list=extend_schema(
        summary="List leagues, newest first",
        responses={200: LeagueSerializer(many=True), **ERRORS},
    ),
)
class LeagueViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    # Reads are plain rows (selectors.leagues.leagues_rows); writes find the league by id.
    queryset = League.objects.all()
    serializer_class = LeagueSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    filterset_class = LeagueFilter
    pagination_class = KeysetPagination
    renderer_classes = RENDERERS
    cursor_ordering = ("-created_at", "-id")  # newest first (index league_kind_recent)

    def list(self, request: Request) -> HttpResponse:
        # What the list shows changes when a league is made or changes state, or a bot's name.
        return api_read(self, request, ["leagues"], self._list)

    def _list(self) -> Response:
        # Plain rows shown by api.rows, exactly as LeagueSerializer (the schema's description).
        checked = ListFilterBackend().filterset_checked(self.request, League.objects.all(), self)
        page = self.paginate_queryset(FixedKeyset(checked, leagues_rows))
        return self.get_paginated_response(leagues_represent(page))

    def _detail(self, league_id: int | str, code: int = status.HTTP_200_OK) -> Response:
        """The league as LeagueDetailSerializer shows it (api.rows, from plain rows)."""
        row = get_object_or_404(league_detail_rows(League.objects.all()), pk=league_id)
        return Response(league_detail_represent(row), status=code)

    @extend_schema(
        summary="A league: status, progress and standings",
        responses={200: LeagueDetailSerializer, **ERRORS},
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        # The standings carry each bot's pool rating: a fit changes them too.
        scopes = [f"league:{pk}", "ratings"]
        return api_read(self, request, scopes, lambda: self._detail(pk))

    @extend_schema(
        summary="Create an open league (the creator may enter any active, healthy bots)",
        description=(
            "Another user's bot enters only if it accepts challenges, and only with "
            "move_timeout_ms at least rated play's (ESCOBA_RATED_MOVE_TIMEOUT_MS); a rated "
            "league (staff) holds one bot per owner. Refusals are 400s naming the field."
        ),
        request=LeagueCreateSerializer,
        responses={201: LeagueDetailSerializer, **ERRORS},
    )
    def create(self, request: Request) -> Response:
        serializer = LeagueCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ruleset = data.get("ruleset") or {"name": DEFAULT_PRESET, "options": {}}
        league = league_create(
            creator=request.user,
            name=data["name"],
            ruleset_name=ruleset["name"],
            ruleset_options=ruleset["options"],
            players=data["players"],
            games_per_pairing=data.get("games_per_pairing"),
            move_timeout_ms=data["move_timeout_ms"],
            max_faults=data["max_faults"],
            rated=data["rated"],
            bot_ids=data["bots"],
        )
        return self._detail(league.pk, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Delete a league that never started (its creator or staff)",
        description="403 for anyone else; 400 once the league has started.",
        responses={204: None, **ERRORS},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        league_delete(league_id=self.get_object().id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _transition(self, service, code: int = status.HTTP_200_OK) -> Response:
        league = self.get_object()
        return self._detail(service(league_id=league.id, user=self.request.user).pk, code)

    @extend_schema(
        summary="Start: 202 at once; the schedule is written and played in the background",
        description=(
            "400 past a league size limit, 429 past the user's running leagues or queued games "
            "(docs/security.md, Quotas). `games_planned` says how many games the schedule will "
            "hold; `progress.total` counts those written so far."
        ),
        request=None,
        responses={202: LeagueDetailSerializer, **ERRORS, **QUEUE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str) -> Response:
        return self._transition(league_start, status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Pause: no new match begins; games in play finish",
        request=None,
        responses={200: LeagueDetailSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str) -> Response:
        return self._transition(league_pause)

    @extend_schema(
        summary="Resume a paused league",
        request=None,
        responses={200: LeagueDetailSerializer, **ERRORS, **QUEUE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str) -> Response:
        return self._transition(league_resume)

    @extend_schema(
        summary="Cancel: matches not begun are dropped; finished games keep their ratings",
        request=None,
        responses={200: LeagueDetailSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        return self._transition(league_cancel)

    @extend_schema(
        summary="Enrol one of your own bots into an open league",
        request=EntryCreateSerializer,
        responses={201: LeagueDetailSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def entries(self, request: Request, pk: str) -> Response:
        league = self.get_object()
        serializer = EntryCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        bot_id = serializer.validated_data["bot"]
        if not Bot.objects.filter(pk=bot_id).exists():
            raise ValidationError({"bot": [ERROR_UNKNOWN_BOT]})
        league_enrol(league_id=league.id, bot_id=bot_id, user=request.user)
        league = self.get_object()  # again: its bots changed
        return self._detail(league.pk, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Crosstable: each bot's score against each other bot",
        responses={200: CrosstableSerializer, **ERRORS},
    )
    @action(detail=True, methods=["get"])
    def crosstable(self, request: Request, pk: str) -> Response:
        return Response(league_crosstable(self.get_object()))


@extend_schema_view(
    list=extend_schema(
        summary="List matches (duplicate sets), in the order they were scheduled",
        responses={200: MatchSerializer(many=True), **ERRORS},
    ),
    retrieve=extend_schema(summary="One match", responses={200: MatchSerializer, **ERRORS}),
)
class MatchViewSet(viewsets.ReadOnlyModelViewSet):
    # Only what GameBriefSerializer shows: a game's log and record are tens of KB each.
    queryset = (
        Match.objects.select_related("league")
        .prefetch_related(
            "bots",
            Prefetch(
                "games",
                queryset=Game.objects.only(
                    "id", "match_id", "number", "status", "seating", "winner", "totals", "reason"
                ).order_by("match_id", "number"),
            ),
        )
        .order_by("league_id", "number")
    )
    serializer_class = MatchSerializer
    permission_classes = [permissions.AllowAny]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    filterset_class = MatchFilter
    pagination_class = KeysetPagination
    renderer_classes = RENDERERS
    cursor_ordering = ("id",)  # a league's matches are numbered in the order they are written


router = SimpleRouter()
router.register("leagues", LeagueViewSet, basename="league")
router.register("matches", MatchViewSet, basename="match")
