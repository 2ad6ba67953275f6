"""`/api/games/`: each game's seats, result, faults and latencies, its log and diagnostics.

Both are published once the game is over and no game still in play shares its deal
(`tournaments.observers.game_sight`: a duplicate set's games are dealt the same cards and played
at the same time); until then they answer 409 `set_in_play`. While a rated game is played its
seats name no bot (`bot` is null), for anyone, the bots' owners included.
`log/` answers exactly the engine's `escoba-log/1` document (what `python -m games validate`
reads). It is stored gzip-compressed and sent as stored, with `Content-Encoding: gzip`, to a
client whose `Accept-Encoding` allows it; others get it decompressed. `diagnostics/` answers what
the runner recorded of each move request (latency, fault) and, for the caller's own bots only,
the private `debug` text and the exact request body.
"""

import gzip

from django.db.models import QuerySet
from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from tournaments.api.caching import api_read, id_param
from tournaments.api.errors import ERRORS, SEALED_ERRORS, SetInPlay
from tournaments.api.filters import GameFilter, ListFilterBackend
from tournaments.api.league_serializers import (
    GameDiagnosticsSerializer,
    GameSerializer,
    duplicate_info,
)
from tournaments.api.leagues import ID_PATTERN
from tournaments.api.pagination import FixedKeyset, KeysetPagination
from tournaments.api.renderers import RENDERERS
from tournaments.api.rows import games_represent
from tournaments.models import Game
from tournaments.observers import game_sight
from tournaments.selectors.leagues import (
    game_diagnostics,
    game_for_sight,
    game_log_gzip,
    games_count,
    games_rows,
)

ERROR_NO_LOG = "This game has no log: it has not finished."
LOG_CONTENT_TYPE = "application/json"


def accepts_gzip(header: str) -> bool:
    """Whether an `Accept-Encoding` header allows gzip (RFC 9110: `gzip` or `*` with q > 0,
    and gzip not refused by its own `q=0`)."""
    weights: dict[str, float] = {}
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name.strip().lower()] = weight
    if "gzip" in weights:
        return weights["gzip"] > 0
    return weights.get("*", 0.0) > 0


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
    # Lists and details are read as plain rows (selectors.leagues.games_rows) and shown by
    # api.rows.games_represent, exactly as GameSerializer, which describes them in the schema.
    queryset = Game.objects.order_by("id")
    serializer_class = GameSerializer
    permission_classes = [permissions.AllowAny]
    lookup_value_regex = ID_PATTERN
    filter_backends = [ListFilterBackend]
    filterset_class = GameFilter
    pagination_class = KeysetPagination
    renderer_classes = RENDERERS

    def cursor_ordering(self, request: Request) -> tuple[str, ...]:
        """``?ordering=`` (id or -id); without it a bot's latest games first, else oldest first
        (a league's schedule in order: its ids grow with the match and game numbers)."""
        asked = request.query_params.get("ordering")
        if asked in ("id", "-id"):
            return (asked,)
        return ("-id",) if id_param(request, "bot") else ("id",)

    def list_count(self, queryset: QuerySet[Game]) -> int | None:
        """All games, or a league's, by status, from the leagues' running totals; a set's or a
        bot's games are counted (None)."""
        if id_param(self.request, "match") or id_param(self.request, "bot"):
            return None
        league = id_param(self.request, "league")
        status = self.request.query_params.get("status") or None
        return games_count(league_id=int(league) if league else None, status=status)

    def list(self, request: Request) -> Response:
        if league := id_param(request, "league"):
            scope = f"league:{league}"
        elif bot := id_param(request, "bot"):
            scope = f"bot:{bot}"
        else:
            scope = "games"
        return api_read(self, request, [scope], self._list)

    def _list(self) -> Response:
        checked = ListFilterBackend().filterset_checked(self.request, self.get_queryset(), self)
        page = self.paginate_queryset(FixedKeyset(checked, games_rows))
        return self.get_paginated_response(games_represent(page))

    def retrieve(self, request: Request, pk: str) -> Response:
        return api_read(self, request, [f"game:{pk}"], lambda: self._detail(pk))

    def _detail(self, pk: str) -> Response:
        row = get_object_or_404(games_rows(self.get_queryset()), pk=pk)
        return Response(games_represent([row])[0])

    @extend_schema(
        summary="The game's escoba-log/1 document, exactly (gzip when accepted)",
        description=(
            "The engine's log of the game, the document `python -m games validate` checks and "
            "docs/game-log.schema.json describes. Sent with `Content-Encoding: gzip` when the "
            "request's `Accept-Encoding` allows it (`Vary: Accept-Encoding`). Latency, faults "
            "and debug output are under `diagnostics/`."
        ),
        responses={(200, LOG_CONTENT_TYPE): dict, **ERRORS, **SEALED_ERRORS},
    )
    @action(detail=True, methods=["get"])
    def log(self, request: Request, pk: str) -> HttpResponse:
        game = game_for_sight(game_id=int(pk))
        if game is None:
            raise NotFound()
        stored = game_log_gzip(game_id=game.pk)
        if stored is None:
            raise NotFound(ERROR_NO_LOG)
        if not game_sight(game).record_shown:
            raise SetInPlay()
        if accepts_gzip(request.headers.get("Accept-Encoding", "")):
            response = HttpResponse(stored, content_type=LOG_CONTENT_TYPE)
            response["Content-Encoding"] = "gzip"
        else:
            response = HttpResponse(gzip.decompress(stored), content_type=LOG_CONTENT_TYPE)
        patch_vary_headers(response, ["Accept-Encoding"])
        return response

    @extend_schema(
        summary="Per play: seat, bot, latency, fault; debug and request for your own bots",
        responses={200: GameDiagnosticsSerializer, **ERRORS, **SEALED_ERRORS},
    )
    @action(detail=True, methods=["get"])
    def diagnostics(self, request: Request, pk: str) -> Response:
        game = game_for_sight(game_id=int(pk))
        if game is None:
            raise NotFound()
        answer = game_diagnostics(game=game, viewer=request.user)
        if answer is None:
            raise NotFound(ERROR_NO_LOG)
        if not game_sight(game).record_shown:
            raise SetInPlay()
        body = {"duplicate": duplicate_info(game), **answer}
        response = Response(GameDiagnosticsSerializer(body).data)
        # The answer differs by viewer (their own bots' plays): no shared cache may keep it.
        response["Cache-Control"] = "private, no-store"
        return response


router = SimpleRouter()
router.register("games", GameViewSet, basename="game")
