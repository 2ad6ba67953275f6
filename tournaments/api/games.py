"""`/api/games/`: each game's seats, result, faults and latencies, and its full log.

The log answer is the engine's `escoba-log/1` document as stored, beside the runner's per-play
latency and faults and the game's duplicate set (the games dealt the same cards).
"""

from django.db.models import F, Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from tournaments.api.caching import api_read, id_param
from tournaments.api.errors import ERRORS
from tournaments.api.filters import GameFilter, ListFilterBackend
from tournaments.api.league_serializers import GameLogSerializer, GameSerializer, duplicate_info
from tournaments.api.leagues import ID_PATTERN
from tournaments.models import Game

ERROR_NO_LOG = "This game has no log: it has not finished."


@extend_schema_view(
    list=extend_schema(
        summary="List games",
        responses={200: GameSerializer(many=True), **ERRORS},
    ),
    retrieve=extend_schema(
        summary="One game: seats with bots, result, faults, latencies",
        responses={200: GameSerializer, **ERRORS},
    ),
)
class GameViewSet(viewsets.ReadOnlyModelViewSet):
    # Each game's faults come from its log row (one small column, see GameSerializer.get_faults);
    # the log document and per-play facts are read only by the log action.
    queryset = (
        Game.objects.select_related("match")
        .annotate(fault_list=F("log__faults"))
        .prefetch_related(
            "seats__bot",
            Prefetch("match__games", queryset=Game.objects.only("id", "match_id", "number")),
        )
        .order_by("id")
    )
    serializer_class = GameSerializer
    permission_classes = [permissions.AllowAny]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    filterset_class = GameFilter

    def list(self, request: Request) -> Response:
        if league := id_param(request, "league"):
            scope = f"league:{league}"
        elif bot := id_param(request, "bot"):
            scope = f"bot:{bot}"
        else:
            scope = "games"
        return api_read(self, request, [scope], lambda: super(GameViewSet, self).list(request))

    def retrieve(self, request: Request, pk: str) -> Response:
        return api_read(
            self, request, [f"game:{pk}"], lambda: super(GameViewSet, self).retrieve(request, pk=pk)
        )

    @extend_schema(
        summary="The game's escoba-log/1 document with per-play latency and faults",
        responses={200: GameLogSerializer, **ERRORS},
    )
    @action(detail=True, methods=["get"])
    def log(self, request: Request, pk: str) -> Response:
        game = Game.objects.select_related("match", "log").filter(pk=pk).first()
        if game is None:
            raise NotFound()
        log = getattr(game, "log", None)
        if log is None:
            raise NotFound(ERROR_NO_LOG)
        return Response(
            {
                "game": game.id,
                "duplicate": duplicate_info(game),
                "log": log.document,
                "meta": log.meta,
                "faults": log.faults,
            }
        )


router = SimpleRouter()
router.register("games", GameViewSet, basename="game")
