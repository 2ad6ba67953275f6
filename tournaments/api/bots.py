"""`/api/bots/`: register bots, manage your own, and see everyone's public side.

Anyone may list and read bots, but only the owner sees a bot's URL, check reports and protocol
info, and only the owner may change, pause, check or delete it (others get 403). The signing
secret appears in exactly two answers: registration and rotation.
"""

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView

from tournaments.api.bot_serializers import (
    BotCheckSerializer,
    BotCreateSerializer,
    BotSerializer,
    BotUpdateSerializer,
    BotWithSecretSerializer,
)
from tournaments.api.caching import api_read
from tournaments.api.errors import ERRORS
from tournaments.api.rows import bot_public_represent
from tournaments.api.throttling import BotCallsThrottle
from tournaments.models import Bot, BotCheck
from tournaments.selectors.ratings import bot_public_rows
from tournaments.services.bots import (
    bot_check,
    bot_delete,
    bot_pause,
    bot_register,
    bot_resume,
    bot_rotate_secret,
    bot_update,
)

# What a missing bot's 404 says (Django's words for a lookup that found nothing, as before).
NO_BOT = "No Bot matches the given query."

# Actions only a bot's owner may run, even those that change nothing.
OWNER_ACTIONS = frozenset(
    {
        "partial_update",
        "destroy",
        "pause",
        "resume",
        "rotate_secret",
        "check",
        "checks",
    }
)


class IsBotOwner(permissions.BasePermission):
    def has_object_permission(self, request: Request, view: APIView, obj: Bot) -> bool:
        return getattr(view, "action", None) not in OWNER_ACTIONS or obj.owner_id == request.user.pk


@extend_schema_view(
    list=extend_schema(
        summary="List bots",
        parameters=[OpenApiParameter("mine", bool, description="Only the caller's own bots.")],
        responses={200: BotSerializer(many=True), **ERRORS},
    ),
    retrieve=extend_schema(summary="One bot", responses={200: BotSerializer, **ERRORS}),
)
class BotViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = Bot.objects.select_related("owner").prefetch_related(
        "ratings__version", "versions__ratings__version", "versions__bot"
    )
    serializer_class = BotSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsBotOwner]

    def get_queryset(self) -> QuerySet[Bot]:
        queryset = super().get_queryset()
        mine = self.request.query_params.get("mine", "").lower() in ("1", "true", "yes")
        if self.action == "list" and mine:
            if not self.request.user.is_authenticated:
                return queryset.none()
            queryset = queryset.filter(owner=self.request.user)
        return queryset

    def get_throttles(self) -> list:
        throttles = super().get_throttles()
        if self.action in ("create", "partial_update", "check"):
            throttles.append(BotCallsThrottle())
        return throttles

    def retrieve(self, request: Request, pk: str) -> Response:
        return api_read(self, request, [f"bot:{pk}", "ratings"], lambda: self._detail(pk))

    def _detail(self, pk: str) -> Response:
        """Anyone but the owner: the public fields as plain rows (``api.rows``, exactly as
        ``BotSerializer``); the owner: the serializer, with the fields only they see."""
        try:
            bot_id = int(pk)  # as the lookup by pk reads it; anything else is not found
        except ValueError:
            raise Http404 from None
        bot, versions, ratings = bot_public_rows(bot_id=bot_id)
        if bot is None:
            raise Http404(NO_BOT)
        if bot["owner_id"] == self.request.user.pk:
            return super().retrieve(self.request, pk=pk)
        return Response(bot_public_represent(bot, versions, ratings))

    @extend_schema(
        summary="Register a bot (its GET U must answer escoba/1 in time)",
        description=(
            "The answer carries the bot's signing `secret`; it is never shown again. Give your "
            "own `secret` (already configured in the bot) to have the first `GET U` signed too; "
            "without one, that first call is unsigned."
        ),
        request=BotCreateSerializer,
        responses={201: BotWithSecretSerializer, **ERRORS},
    )
    def create(self, request: Request) -> Response:
        serializer = BotCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        bot = bot_register(owner=request.user, **serializer.validated_data)
        data = BotWithSecretSerializer(bot, context=self.get_serializer_context()).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Change a bot's name, description, URL (verified again) or accepts_challenges",
        request=BotUpdateSerializer,
        responses={200: BotSerializer, **ERRORS},
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        bot = self.get_object()
        serializer = BotUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        bot = bot_update(bot=bot, **serializer.validated_data)
        return Response(self.get_serializer(bot).data)

    @extend_schema(summary="Delete a bot that never played", responses={204: None, **ERRORS})
    def destroy(self, request: Request, pk: str) -> Response:
        bot_delete(bot=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Pause: no new leagues schedule the bot",
        request=None,
        responses={200: BotSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str) -> Response:
        bot = bot_pause(bot=self.get_object(), by=request.user)
        return Response(self.get_serializer(bot).data)

    @extend_schema(
        summary="Resume a paused bot", request=None, responses={200: BotSerializer, **ERRORS}
    )
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str) -> Response:
        return Response(self.get_serializer(bot_resume(bot=self.get_object())).data)

    @extend_schema(
        summary="Issue a new signing secret (the old one stops working at once)",
        request=None,
        responses={200: BotWithSecretSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str) -> Response:
        bot = bot_rotate_secret(bot=self.get_object())
        return Response(BotWithSecretSerializer(bot, context=self.get_serializer_context()).data)

    @extend_schema(
        summary="Run the protocol check against the live bot",
        description="200 whether the bot passed or not: `passed` and `report` say which.",
        request=None,
        responses={200: BotCheckSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def check(self, request: Request, pk: str) -> Response:
        result = bot_check(bot=self.get_object(), trigger=BotCheck.Trigger.OWNER)
        return Response(BotCheckSerializer(result).data)

    @extend_schema(
        summary="The bot's past checks, newest first",
        responses={200: BotCheckSerializer(many=True), **ERRORS},
    )
    @action(detail=True, methods=["get"])
    def checks(self, request: Request, pk: str) -> Response:
        bot = self.get_object()
        page = self.paginate_queryset(bot.checks.select_related("bot"))
        return self.get_paginated_response(BotCheckSerializer(page, many=True).data)


router = SimpleRouter()
router.register("bots", BotViewSet, basename="bot")
