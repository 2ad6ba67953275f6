"""Games with a person at the table: a seat played from the browser (or a script) through the
API, the others by bots, refereed like any other game (``services.play``)."""

from django.conf import settings
from django.db import models

from .leagues import Game


class PersonGame(models.Model):
    """A person's seat in one game, and the game's progress so far.

    The game itself is a ``Game`` row like any other (its league of kind ``play``, unrated), with
    ``None`` at the person's place in ``seating`` and no ``Seat`` row for it. Nothing but the
    answers is stored while it is played: ``answers`` holds, in order, what each move request
    got back (the move as answered, or the fault, the latency and the bot's debug text). The
    same seed and the same answers referee the same game, so the engine and the referee are
    rebuilt from them on every step, in any process, after any restart.
    """

    class Status(models.TextChoices):
        PLAYING = "playing", "playing"
        FINISHED = "finished", "finished"

    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="person_games"
    )
    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="person_game")
    seat = models.PositiveSmallIntegerField(help_text="The person's seat.")
    team = models.PositiveSmallIntegerField(help_text="The person's team.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLAYING)
    seat_names = models.JSONField(help_text="The names the move requests give the seats.")
    answers = models.JSONField(default=list, help_text="Every move request's answer, in order.")
    person_to_move = models.BooleanField(default=False)
    turn_started_at = models.DateTimeField(
        null=True, blank=True, help_text="When the person's current move request was made."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(
        auto_now=True, help_text="Last answer or clock start: a bots' turn idle since is stalled."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["person", "status"], name="person_game_playing"),
            models.Index(fields=["person_to_move", "turn_started_at"], name="person_game_clock"),
        ]

    def __str__(self) -> str:
        return f"{self.person} in game {self.game_id}"
