"""Leagues, their entries, matches (duplicate sets), games and the seats bots took in them."""

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from games.faults import DEFAULT_MAX_FAULTS, DEFAULT_TIMEOUT_MS
from tournaments import packed

from .bots import Bot


class League(models.Model):
    """Matches (duplicate sets) among entered bots under one ruleset and table size.

    ``kind`` says who schedules them: a ``league`` is a round robin written when it starts; the
    ``ladder`` league of a pool (one per pool, never finished) grows as the matchmaker adds sets;
    a ``challenge`` is the sets one user asked for; a ``test`` grows set by set until its
    sequential test decides (``tournaments.services.ladder``, ``challenges``, ``version_tests``).
    All are played by the same match task. The league's ``seed`` fixes every deal of every
    match, so a league can be replayed and a half-played match restarted with the very same cards.
    """

    class Kind(models.TextChoices):
        LEAGUE = "league", "league"
        LADDER = "ladder", "ladder"
        CHALLENGE = "challenge", "challenge"
        TEST = "test", "test"
        # One game with a person at the table (tournaments.services.play); never rated.
        PLAY = "play", "play"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=100)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leagues"
    )
    ruleset = models.JSONField(help_text="The resolved ruleset: name, version and every option.")
    pool = models.CharField(max_length=50, help_text="Rating pool, e.g. classic/2p.")
    players = models.PositiveSmallIntegerField(help_text="Seats per table; 4 = two partnerships.")
    games_per_pairing = models.PositiveSmallIntegerField(default=2)
    move_timeout_ms = models.PositiveIntegerField(default=DEFAULT_TIMEOUT_MS)
    max_faults = models.PositiveSmallIntegerField(
        default=DEFAULT_MAX_FAULTS,
        help_text="A seat forfeits a game on its fault number max_faults + 1.",
    )
    rated = models.BooleanField(default=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.LEAGUE)
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    games_planned = models.PositiveIntegerField(
        default=0,
        help_text=(
            "Games of the whole schedule, set when a round robin starts: its schedule is written "
            "in batches in the background, and the league is not finished before all are. "
            "0 for leagues that grow set by set."
        ),
    )
    bots = models.ManyToManyField(Bot, through="LeagueEntry", related_name="leagues")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status"]),
            models.Index(fields=["kind", "pool"]),
            # The leagues list, newest first, a page at a time (keyset pagination).
            models.Index(fields=["kind", "-created_at", "-id"], name="league_kind_recent"),
        ]
        constraints = [
            # Names are told apart without regard to case, as the API and the pages check them
            # (services.league_creation.league_create_errors); this holds when two requests race.
            models.UniqueConstraint(Lower("name"), name="league_name_unique"),
            # Two fills racing to make a pool's ladder must not make two.
            models.UniqueConstraint(
                fields=["pool"],
                condition=models.Q(kind="ladder"),
                name="league_one_ladder_per_pool",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class LeagueEntry(models.Model):
    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="league_entries")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["league", "bot"], name="league_entry_unique_bot"),
        ]
        verbose_name_plural = "league entries"

    def __str__(self) -> str:
        return f"{self.bot} in {self.league}"


class Match(models.Model):
    """One duplicate set: the games of a pairing (or 3-bot table) that share ``seed``'s deals.

    A match is the unit of work of a Celery task; its games are played together.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="matches")
    number = models.PositiveIntegerField()
    round = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    bots = models.ManyToManyField(Bot, related_name="matches")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0, help_text="How many times play began.")
    worker = models.CharField(
        max_length=200, blank=True, help_text="Celery worker that last began playing it."
    )
    claim = models.CharField(
        max_length=64, blank=True, help_text="Task id of the run playing it (its lease)."
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of that run; stale = the run died."
    )
    created_at = models.DateTimeField(
        default=timezone.now, help_text="When it was scheduled (and its task first sent)."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    versions = models.JSONField(
        default=dict,
        blank=True,
        help_text="Bot id -> the BotVersion id it announced as the set began.",
    )

    class Meta:
        # By the key's columns: ordering by the foreign key itself would sort by League's own
        # ordering, a join for every read of matches that names no order.
        ordering = ["league_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["league", "number"], name="match_unique_number"),
        ]
        indexes = [
            models.Index(fields=["league", "status"]),
            # Matches in flight (the metrics' gauge): a few rows, however many were played.
            models.Index(
                fields=["league"], condition=models.Q(status="running"), name="match_running"
            ),
        ]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"{self.league} match {self.number}"

    @property
    def sealed(self) -> bool:
        """Whether the set's deals are still secret: its games share the seed's deals and are
        played at the same time, so until the whole set is over its seed, logs and diagnostics
        would show a bot its opponent's hand and the cards still to come."""
        return self.status in (self.Status.PENDING, self.Status.RUNNING)


class Game(models.Model):
    """One game of a match and its result; its full log is a ``GameLog`` row (``game.log``).

    ``seating`` lists the bot ids by seat, fixed by the schedule; ``Seat`` rows are the same
    facts in a form that can be filtered and aggregated.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        FINISHED = "finished", "finished"
        # Ran past the match time limit: kept for the record, without a result or rating.
        ABORTED = "aborted", "aborted"

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="games")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="games")
    number = models.PositiveSmallIntegerField(help_text="Position within the duplicate set.")
    seed = models.BigIntegerField()
    seating = models.JSONField(help_text="Bot id by seat.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    winner = models.SmallIntegerField(null=True, blank=True, help_text="Winning team, or null.")
    totals = models.JSONField(null=True, blank=True, help_text="Game points by team.")
    reason = models.CharField(max_length=40, blank=True)
    forfeit = models.SmallIntegerField(null=True, blank=True, help_text="Seat that forfeited.")
    moves = models.PositiveIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0)
    rated = models.BooleanField(default=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # By the key's columns, not through Match and League (see Match.Meta).
        ordering = ["match_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="game_unique_number"),
        ]
        indexes = [
            models.Index(fields=["league", "status"]),
            # A league's latest results (its page), newest first, without sorting its games.
            models.Index(
                fields=["league", "status", "-finished_at", "-id"], name="game_league_recent"
            ),
            # A league's games in schedule order (ids grow with the match and game numbers), a
            # page at a time from a cursor: the games list and the league's games page.
            models.Index(fields=["league", "id"], name="game_league_id"),
        ]

    def __str__(self) -> str:
        return f"game {self.pk} ({self.match})"


class GameLog(models.Model):
    """What a finished game leaves behind, in its own table (one row per game), compressed.

    Kept apart from ``Game`` so that no list of games can load a log by accident: a query reads
    it only by naming it (``select_related("log")``, ``game.log``, ``F("log__faults")``).
    ``document_gzip`` is the escoba-log/1 document as gzip-compressed JSON, served as it is to
    clients that accept gzip. ``diagnostics_gzip`` holds one row per move request (see
    ``PlayCall.diagnostics``): public latency and fault, and the owner-only debug text and
    request body (less what the log holds, see ``packed``). ``faults`` lists every fault with
    its seat, 1-based round and play number, uncompressed so that lists of games can show it.
    """

    game = models.OneToOneField(
        Game, on_delete=models.CASCADE, primary_key=True, related_name="log"
    )
    document_gzip = models.BinaryField(help_text="The escoba-log/1 document, gzip JSON.")
    diagnostics_gzip = models.BinaryField(
        default=packed.empty_list, help_text="Per move request: latency, fault, debug, request."
    )
    faults = models.JSONField(default=list, help_text="Every fault: seat, round, play, kind.")

    def __str__(self) -> str:
        return f"log of game {self.game_id}"

    @property
    def document(self) -> dict[str, Any]:
        """The escoba-log/1 document, decompressed once per instance."""
        if "_document" not in self.__dict__:
            self.__dict__["_document"] = packed.unpack(self.document_gzip)
        return self.__dict__["_document"]

    @document.setter
    def document(self, value: dict[str, Any]) -> None:
        self.document_gzip = packed.pack(value, level=packed.LEVEL_LOG)
        self.__dict__["_document"] = value

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        """Every move request of the game in order, with what only the bot's owner may see (each
        request made whole again: see ``packed.requests_restored``)."""
        if "_diagnostics" not in self.__dict__:
            stored = packed.unpack(self.diagnostics_gzip)
            self.__dict__["_diagnostics"] = packed.requests_restored(stored, self.document)
        return self.__dict__["_diagnostics"]

    @diagnostics.setter
    def diagnostics(self, value: list[dict[str, Any]]) -> None:
        stored = packed.requests_stored(value)
        self.diagnostics_gzip = packed.pack(stored, level=packed.LEVEL_DIAGNOSTICS)
        self.__dict__["_diagnostics"] = value

    @property
    def meta(self) -> list[list[dict[str, Any]]]:
        """``meta[r][p]`` belongs to ``document["rounds"][r]["plays"][p]``: that play's seat,
        ``latency_ms``, and ``fault``/``detail`` when the runner played the fallback move."""
        return packed.public_meta(self.diagnostics, rounds=len(self.document["rounds"]))


class Seat(models.Model):
    """A bot's place in one game, with how it behaved there.

    The figures are stored when the game finishes (``game_finish``), so that a bot's profile is
    drawn from these rows and never from logs: latency over the seat's plays (nearest-rank
    percentiles, always a measured value) and its faults by kind.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    team = models.PositiveSmallIntegerField()
    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="seats")
    moves = models.PositiveIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0)
    latency_mean_ms = models.FloatField(null=True, blank=True)
    latency_p50_ms = models.FloatField(null=True, blank=True)
    latency_p95_ms = models.FloatField(null=True, blank=True)
    latency_max_ms = models.FloatField(null=True, blank=True)
    fault_kinds = models.JSONField(default=dict, help_text="Faults by kind: {kind: count}.")
    no_show = models.BooleanField(
        default=False, help_text="Made no valid move: unreachable or silent (not rated)."
    )
    finished_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the game finished with a result (the game's own time); empty while it "
        "is played and for an aborted game.",
    )

    class Meta:
        # By the key's columns, not through Game, Match and League (see Match.Meta).
        ordering = ["game_id", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seat"], name="seat_unique_per_game"),
        ]
        indexes = [
            # A bot's games by id, newest first (the games list filtered by bot), from the index
            # alone: the single-column index on bot would visit every seat of its history.
            models.Index(fields=["bot", "-game"], name="seat_bot_recent"),
            # A bot's last finished games (its profile's figures and recent games) read from
            # the top of this index instead of sorting all its games by the game's time.
            models.Index(
                fields=["bot", "-finished_at", "-game"],
                name="seat_bot_finished",
                condition=models.Q(finished_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} at seat {self.seat} of game {self.game_id}"


class HeadToHead(models.Model):
    """Running totals of one bot's finished games against one opponent: its profile's head to
    head, one row per opponent however many games a busy bot has played.

    Kept by ``services.matches.game_finish`` in the transaction that stores each game, so they
    always equal the finished games counted afresh. An opponent is a bot on another team; in a
    game of three every other seat is beaten, or not, by the same result.
    """

    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="+")
    opponent = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="+")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["bot", "opponent"]
        verbose_name_plural = "head to head totals"
        constraints = [
            models.UniqueConstraint(fields=["bot", "opponent"], name="head_to_head_once"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} against {self.opponent}: {self.games} games"
