"""What owners are told about their bots, and how each owner wants to be told."""

from django.conf import settings
from django.db import models

from .bots import Bot
from .encrypted import EncryptedTextField


class NotificationSettings(models.Model):
    """One owner's choices: email on or off, and optionally a webhook of their own.

    The webhook is called like a bot (the same address policy) and signed per Standard
    Webhooks with `webhook_secret`, which the API shows only when it is made. After
    `ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER` notifications in a row could not be delivered to it,
    the webhook is suspended (`webhook_suspended_at`) until the owner sets its URL again.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings"
    )
    email_enabled = models.BooleanField(default=True)
    # The address its owner confirmed through the link we mailed; mail goes only to this one
    # (tournaments/services/email_verification.py).
    verified_email = models.CharField(max_length=254, blank=True)
    webhook_url = models.CharField(max_length=500, blank=True)
    # Encrypted at rest like a bot's secret (tournaments/models/encrypted.py).
    webhook_secret = EncryptedTextField(blank=True)
    webhook_failures = models.PositiveIntegerField(
        default=0, help_text="Notifications in a row that the webhook did not accept."
    )
    webhook_suspended_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return f"notification settings of {self.user}"


class Notification(models.Model):
    """One thing an owner was told, with how far each way of telling them got."""

    class Event(models.TextChoices):
        BOT_PAUSED = "bot.paused", "bot paused"
        BOT_UNHEALTHY = "bot.unhealthy", "bot unhealthy"
        BOT_HEALTHY = "bot.healthy", "bot healthy again"
        BOT_RATED_PAUSED = "bot.rated_paused", "bot out of rated play"
        BOT_RATED_RESUMED = "bot.rated_resumed", "bot back in rated play"
        CHALLENGE_RECEIVED = "challenge.received", "challenge received"
        VERSION_TEST_FINISHED = "version_test.finished", "version test finished"
        WEBHOOK_SUSPENDED = "webhook.suspended", "notification webhook suspended"

    class Delivery(models.TextChoices):
        PENDING = "pending", "pending"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"
        SKIPPED = "skipped", "skipped"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    event = models.CharField(max_length=40, choices=Event.choices)
    bot = models.ForeignKey(
        Bot, null=True, blank=True, on_delete=models.SET_NULL, related_name="notifications"
    )
    subject = models.CharField(max_length=200)
    message = models.TextField()
    data = models.JSONField(default=dict, blank=True)
    email_status = models.CharField(
        max_length=10, choices=Delivery.choices, default=Delivery.PENDING
    )
    webhook_status = models.CharField(
        max_length=10, choices=Delivery.choices, default=Delivery.PENDING
    )
    webhook_attempts = models.PositiveSmallIntegerField(default=0)
    webhook_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"], name="notification_user_recent")]

    def __str__(self) -> str:
        return f"{self.event} for {self.user}"
