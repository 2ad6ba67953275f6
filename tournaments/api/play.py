"""`/api/play/`: a person plays bots, one seat of a game refereed like any other.

- ``POST /api/play/`` ``{"opponent": bot id, "ruleset": "classic", "players": 2}`` (a table of
  4: ``"players": 4`` with ``"partner"`` and ``"opponents": [id, id]``) → 201 ``{"id", "game",
  "seat", ...}``. Any bot that accepts challenges, or one of your own; a few games in play at
  once (``ESCOBA_PLAY_MAX_GAMES``).
- ``GET /api/play/{id}/`` → ``{"status": "your_turn" | "waiting" | "finished", "game",
  "request", "clock_ms", ...}``: ``request`` is the escoba/1 move request of your seat on your
  turn (``null`` otherwise), ``clock_ms`` the time left for this move. Only you may read it: 404
  for anyone else, the bots' owners included.
- ``POST /api/play/{id}/move/`` ``{"card", "capture"}`` → 200 with the new state; 400 for an
  illegal move (nothing is lost: play again), 409 when it is not your turn.

Throttled as the rest of the API (per user). The logic is in ``tournaments.services.play``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.errors import ERRORS, error_body
from tournaments.api.filters import MAX_ID
from tournaments.models import PersonGame
from tournaments.services import play

NO_SUCH_GAME = "You have no game with this id."


class PlayCreateSerializer(serializers.Serializer):
    opponent = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    ruleset = serializers.CharField(max_length=50, default="classic")
    players = serializers.IntegerField(min_value=2, max_value=4, default=2)
    partner = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    opponents = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        min_length=2,
        max_length=2,
        required=False,
    )


class PlayMoveSerializer(serializers.Serializer):
    card = serializers.CharField(max_length=3)
    capture = serializers.ListField(
        child=serializers.CharField(max_length=3), max_length=40, default=list
    )


class PlayStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["your_turn", "waiting", "finished"])
    seat = serializers.IntegerField()
    team = serializers.IntegerField()
    players = serializers.IntegerField()
    seat_names = serializers.ListField(child=serializers.CharField())
    request = serializers.DictField(allow_null=True)
    view = serializers.DictField(allow_null=True)
    clock_ms = serializers.IntegerField(allow_null=True)
    clock_s = serializers.IntegerField()
    moves = serializers.IntegerField()
    result = serializers.DictField(allow_null=True)
    replay_url = serializers.CharField(allow_null=True)
    page_url = serializers.CharField()


def _not_found() -> Response:
    return Response(error_body(NO_SUCH_GAME, "not_found"), status=status.HTTP_404_NOT_FOUND)


class PlayCreateView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=PlayCreateSerializer, responses={201: PlayStateSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        serializer = PlayCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        person_game = play.play_create(
            person=request.user,
            ruleset_name=data["ruleset"],
            players=data["players"],
            opponent=data.get("opponent"),
            partner=data.get("partner"),
            opponents=data.get("opponents"),
        )
        state = play.play_read(person_game_id=person_game.id, person=request.user)
        return Response(play.play_state_body(state), status=status.HTTP_201_CREATED)


class PlayDetailView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: PlayStateSerializer, **ERRORS})
    def get(self, request: Request, person_game_id: int) -> Response:
        state = play.play_read(person_game_id=person_game_id, person=request.user)
        if state is None:
            return _not_found()
        return Response(play.play_state_body(state))


class PlayMoveView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=PlayMoveSerializer, responses={200: PlayStateSerializer, 409: None, **ERRORS}
    )
    def post(self, request: Request, person_game_id: int) -> Response:
        if play.play_find(person_game_id=person_game_id, person=request.user) is None:
            return _not_found()
        serializer = PlayMoveSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            play.play_move(person_game_id=person_game_id, person=request.user,
                           card=data["card"], capture=data["capture"])  # fmt: skip
        except PersonGame.DoesNotExist:
            return _not_found()
        except play.NotYourTurn as error:
            return Response(
                error_body(str(error), "not_your_turn"), status=status.HTTP_409_CONFLICT
            )
        except ValidationError as error:
            errors = error.message_dict
            code = "illegal_move" if errors.get("card") == [play.ERROR_ILLEGAL] else "invalid_move"
            detail = errors["card"][0]
            return Response(error_body(detail, code, errors), status=status.HTTP_400_BAD_REQUEST)
        state = play.play_read(person_game_id=person_game_id, person=request.user)
        return Response(play.play_state_body(state))
