"""Challenges and version tests: unrated duplicate sets one user asked for, each in its own league.

Their sets are ordinary matches of a ``League`` of kind ``challenge`` or ``test``, played by the
same task, leases and idempotence as every other match; these rows say who asked for what and,
for a test, what the sequential test concluded so far.
"""

from django.conf import settings
from django.db import models

from .bots import Bot
from .leagues import League


class Challenge(models.Model):
    """``bot`` (the challenger's own) against ``opponent`` for ``sets`` duplicate sets."""

    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges"
    )
    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="challenges_made")
    opponent = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="challenges_received")
    sets = models.PositiveSmallIntegerField()
    league = models.OneToOneField(League, on_delete=models.PROTECT, related_name="challenge")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["creator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.bot} v {self.opponent} ({self.sets} sets)"


class VersionTest(models.Model):
    """A sequential probability ratio test: is ``candidate`` at least ``elo1`` better than
    ``baseline`` (accepted), or at most ``elo0`` (rejected)? See ``tournaments.sprt``.

    The figures (``counts``, ``llr``, ``elo``...) are recomputed from the league's finished sets
    after each set, so a set is counted once however often that recomputation runs.
    """

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"
        INCONCLUSIVE = "inconclusive", "inconclusive"

    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="version_tests"
    )
    candidate = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="tests_as_candidate")
    baseline = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="tests_as_baseline")
    elo0 = models.FloatField()
    elo1 = models.FloatField()
    alpha = models.FloatField()
    beta = models.FloatField()
    max_sets = models.PositiveIntegerField()
    league = models.OneToOneField(League, on_delete=models.PROTECT, related_name="version_test")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    counts = models.JSONField(
        default=list, help_text="Sets by candidate score 0, 1/4, 1/2, 3/4, 1 (pentanomial)."
    )
    sets = models.PositiveIntegerField(default=0, help_text="Sets counted so far.")
    llr = models.FloatField(default=0.0)
    elo = models.FloatField(null=True, blank=True)
    elo_low = models.FloatField(null=True, blank=True)
    elo_high = models.FloatField(null=True, blank=True)
    series = models.JSONField(default=list, help_text="[sets, llr] after each update, for charts.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["creator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.candidate} v {self.baseline}: {self.status}"
