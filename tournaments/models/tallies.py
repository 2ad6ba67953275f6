"""Running totals of each league, kept as its games are written and stored, so that no read
counts or scans a league's games: a ladder's league grows without end, and its page, its API
answer and every games list would otherwise cost more with every game played.

Kept by ``tournaments.services.tallies`` in the transactions that write the facts they total
(the schedule, each stored or aborted game, each finished set); ``tallies_rebuild`` counts them
afresh from the games, and the tests check that both agree.
"""

from django.db import models

from .bots import Bot
from .leagues import League


class LeagueTally(models.Model):
    """A league's games by state and the faults in them: its progress bar and its games count."""

    league = models.OneToOneField(
        League, on_delete=models.CASCADE, primary_key=True, related_name="tally"
    )
    games = models.PositiveIntegerField(default=0, help_text="Games written (scheduled).")
    finished = models.PositiveIntegerField(default=0)
    aborted = models.PositiveIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0, help_text="Bot faults in finished games.")

    def __str__(self) -> str:
        return f"tally of {self.league_id}: {self.finished + self.aborted}/{self.games}"


class LeagueStanding(models.Model):
    """One bot's line in one league's table: its games, game points, faults and sets."""

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    points_for = models.PositiveIntegerField(default=0)
    points_against = models.PositiveIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0)
    sets_won = models.PositiveIntegerField(default=0)
    sets_drawn = models.PositiveIntegerField(default=0)
    sets_lost = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["league_id", "bot_id"]
        constraints = [
            models.UniqueConstraint(fields=["league", "bot"], name="league_standing_once"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} in {self.league_id}: {self.games} games"


class LeaguePair(models.Model):
    """One crosstable cell: ``bot``'s score against ``opponent`` over the games they met in."""

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(default=0.0)
    games = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["league_id", "bot_id", "opponent_id"]
        constraints = [
            models.UniqueConstraint(fields=["league", "bot", "opponent"], name="league_pair_once"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} against {self.opponent_id} in {self.league_id}"
