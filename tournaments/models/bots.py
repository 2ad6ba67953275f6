"""Registered bots: where each one answers, how it signs, and whether it is fit to play."""

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

from .encrypted import EncryptedTextField


class Bot(models.Model):
    """A bot author's HTTP endpoint, registered under a unique name.

    `secret` signs every call we make to the bot (Standard Webhooks). We need it back to sign,
    so it is encrypted at rest under ESCOBA_SECRETS_KEY (`EncryptedTextField`), not hashed; the
    API shows it only when it is created or rotated.
    """

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        PAUSED = "paused", "paused"

    class Health(models.TextChoices):
        UNKNOWN = "unknown", "unknown"
        HEALTHY = "healthy", "healthy"
        UNHEALTHY = "unhealthy", "unhealthy"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    name = models.CharField(max_length=40, unique=True)
    url = models.CharField(max_length=500)
    description = models.TextField(blank=True, max_length=500)
    # `whsec_` and the base64 of a 24 to 64 byte key (Standard Webhooks): up to 94 characters,
    # stored as a Fernet token.
    secret = EncryptedTextField()
    secret_rotated_at = models.DateTimeField(
        null=True, blank=True, help_text="When the owner last asked for a new secret."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    health = models.CharField(max_length=10, choices=Health.choices, default=Health.UNKNOWN)
    check_failures = models.PositiveIntegerField(
        default=0, help_text="Consecutive failed protocol checks."
    )
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_check_report = models.JSONField(null=True, blank=True)
    last_latency_ms = models.FloatField(null=True, blank=True)
    protocol_name = models.CharField(max_length=100, blank=True)
    protocol_author = models.CharField(max_length=100, blank=True)
    protocol_version = models.CharField(max_length=100, blank=True)
    no_shows = models.PositiveIntegerField(
        default=0, help_text="Games it never showed up for (unreachable or silent throughout)."
    )
    no_shows_in_row = models.PositiveIntegerField(
        default=0, help_text="Consecutive games it never showed up for."
    )
    rated_paused_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Out of rated play since then (no-shows in a row) until a check passes.",
    )
    rated_retry_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Not paired before then (a no-show's backoff); paused: next check then.",
    )
    rated_rechecks = models.PositiveIntegerField(
        default=0, help_text="Failed protocol checks since it was paused for no-shows."
    )
    accepts_challenges = models.BooleanField(
        default=True, help_text="Other users may challenge it, or test their bots against it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            # "Greedy" and "greedy" would be the same bot to anyone reading a ranking.
            models.UniqueConstraint(Lower("name"), name="bot_name_unique_ignoring_case"),
        ]

    def __str__(self) -> str:
        return self.name


class BotCheck(models.Model):
    """One run of the protocol check against a bot, kept so health changes can be explained."""

    class Trigger(models.TextChoices):
        OWNER = "owner", "owner"
        ADMIN = "admin", "admin"
        SCHEDULE = "schedule", "schedule"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="checks")
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    passed = models.BooleanField()
    latency_ms = models.FloatField(null=True, blank=True)
    report = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["bot", "-created_at"], name="botcheck_bot_recent")]

    def __str__(self) -> str:
        outcome = "passed" if self.passed else "failed"
        return f"{self.bot} {outcome} at {self.created_at:%Y-%m-%d %H:%M}"


class BotVersion(models.Model):
    """A version a bot announced in its `GET U` answer; its ratings belong to it.

    Seen at registration, on a URL change and on every check. A bot's current version is the one
    in ``Bot.protocol_version``; the others stay, with their ratings, in its profile.
    """

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=100, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bot", "-first_seen_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "version"], name="bot_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} {self.version or '(no version)'}"
