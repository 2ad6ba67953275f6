"""`/api/notifications/` and `/api/notification-settings/`: what owners were told, and how.

Each user sees only their own notifications and settings. The webhook's signing secret appears
in exactly two answers: the one that set the first webhook URL, and `rotate-secret`.
"""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView

from tournaments.api.errors import ERRORS
from tournaments.api.fields import StringField
from tournaments.api.league_serializers import BotRefSerializer
from tournaments.api.throttling import VerifyEmailThrottle
from tournaments.models import Notification, NotificationSettings
from tournaments.services.email_verification import email_verified
from tournaments.services.notifications import (
    notification_settings_get,
    notification_settings_rotate_secret,
    notification_settings_update,
)

ERROR_EMAIL_TYPE = "Enter the email address as a string."
ERROR_WEBHOOK_TYPE = 'Enter the webhook URL as a string ("" removes it).'


class NotificationSerializer(serializers.ModelSerializer):
    bot = BotRefSerializer(allow_null=True, read_only=True)

    class Meta:
        model = Notification
        fields = [
            "id", "event", "bot", "subject", "message", "data", "email_status",
            "webhook_status", "webhook_attempts", "webhook_error", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class NotificationSettingsSerializer(serializers.ModelSerializer):
    email = serializers.CharField(source="user.email", read_only=True)
    email_verified = serializers.SerializerMethodField()
    webhook_active = serializers.SerializerMethodField()

    class Meta:
        model = NotificationSettings
        fields = [
            "email", "email_verified", "email_enabled", "webhook_url", "webhook_active",
            "webhook_failures", "webhook_suspended_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_email_verified(self, preferences: NotificationSettings) -> bool:
        """Confirmed through the link we mailed: only then is anything else mailed to it."""
        return email_verified(user=preferences.user, preferences=preferences)

    def get_webhook_active(self, preferences: NotificationSettings) -> bool:
        """Set and not suspended: notifications are being posted to it."""
        return bool(preferences.webhook_url) and preferences.webhook_suspended_at is None


class NotificationSettingsWithSecretSerializer(NotificationSettingsSerializer):
    """The settings plus the webhook's signing secret, in the answers that make one."""

    # Not required: a PATCH that makes no secret answers without it.
    webhook_secret = serializers.CharField(
        required=False, help_text="Shown only in the answer that makes it."
    )

    class Meta(NotificationSettingsSerializer.Meta):
        fields = [*NotificationSettingsSerializer.Meta.fields, "webhook_secret"]


class NotificationSettingsUpdateSerializer(serializers.Serializer):
    email = StringField(max_length=254, message=ERROR_EMAIL_TYPE, required=False, allow_blank=True)
    email_enabled = serializers.BooleanField(required=False)
    webhook_url = StringField(
        max_length=500,
        message=ERROR_WEBHOOK_TYPE,
        required=False,
        allow_blank=True,
        help_text='Your HTTP(S) endpoint for signed notifications; "" removes it.',
    )


@extend_schema_view(
    list=extend_schema(
        summary="Your notifications, newest first",
        responses={200: NotificationSerializer(many=True), **ERRORS},
    ),
)
class NotificationViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = NotificationSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> Any:
        return Notification.objects.filter(user=self.request.user).select_related("bot")


class NotificationSettingsView(APIView):
    """How you are told: email on or off (and its address), and your webhook."""

    permission_classes = [permissions.IsAuthenticated]

    def get_throttles(self) -> list:
        """Giving an address mails it a confirmation link: limited per user, so the settings
        cannot be used to send mail to strangers over and over."""
        throttles = super().get_throttles()
        if self.request.method == "PATCH" and isinstance(self.request.data, dict):
            if self.request.data.get("email"):
                throttles.append(VerifyEmailThrottle())
        return throttles

    @extend_schema(
        summary="Your notification settings",
        responses={200: NotificationSettingsSerializer, **ERRORS},
    )
    def get(self, request: Request) -> Response:
        preferences = notification_settings_get(user=request.user)
        return Response(NotificationSettingsSerializer(preferences).data)

    @extend_schema(
        summary="Change your notification settings",
        description=(
            "Setting the first webhook URL makes its signing secret, shown in this answer "
            "only (`webhook_secret`). Setting the URL again ends a suspension. A new `email` is "
            "mailed a confirmation link (`email_verified` is false until it is followed); no "
            "notification is mailed to an unconfirmed address."
        ),
        request=NotificationSettingsUpdateSerializer,
        responses={200: NotificationSettingsWithSecretSerializer, **ERRORS},
    )
    def patch(self, request: Request) -> Response:
        serializer = NotificationSettingsUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        preferences, secret = notification_settings_update(
            user=request.user, **serializer.validated_data
        )
        if secret is None:
            return Response(NotificationSettingsSerializer(preferences).data)
        return Response(NotificationSettingsWithSecretSerializer(preferences).data)


class NotificationSecretView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        summary="A new signing secret for your webhook (the old one stops at once)",
        request=None,
        responses={200: NotificationSettingsWithSecretSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        preferences = notification_settings_rotate_secret(user=request.user)
        return Response(NotificationSettingsWithSecretSerializer(preferences).data)


router = SimpleRouter()
router.register("notifications", NotificationViewSet, basename="notification")
