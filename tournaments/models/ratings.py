"""Elo ratings per pool, and the change every rated game made to them."""

from django.db import models

from .bots import Bot
from .leagues import Game


class Rating(models.Model):
    """A bot's current Elo in one pool (ruleset and table size, e.g. ``classic/2p``).

    Ratings are exact decimals: see ``tournaments.elo``. Rows are locked in bot id order while a
    game's changes are applied.
    """

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="ratings")
    pool = models.CharField(max_length=50)
    rating = models.DecimalField(max_digits=8, decimal_places=2)
    games = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pool", "-rating", "bot_id"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "pool"], name="rating_unique_bot_pool"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} {self.pool} {self.rating}"


class RatingChange(models.Model):
    """What one game did to one bot's rating. The id order is the order of application.

    The unique (game, bot) constraint is what makes rating a game twice impossible.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="rating_changes")
    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="rating_changes")
    pool = models.CharField(max_length=50)
    k = models.DecimalField(max_digits=6, decimal_places=2)
    before = models.DecimalField(max_digits=8, decimal_places=2)
    delta = models.DecimalField(max_digits=8, decimal_places=2)
    after = models.DecimalField(max_digits=8, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "bot"], name="rating_change_once_per_game"),
        ]
        indexes = [models.Index(fields=["bot", "pool", "id"])]

    def __str__(self) -> str:
        return f"{self.bot} {self.delta:+} in game {self.game_id}"
