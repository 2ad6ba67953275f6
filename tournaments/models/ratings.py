"""Rated duplicate sets, and the fitted ratings published from them (see docs/ratings.md).

A rated set is written once, when its match finishes (``RatedSet``, one ``SetScore`` per pair of
bot versions). Ratings are never accumulated: each fit of a pool recomputes every rating of the
pool from all of its rated sets (``games.ratings.fit``), replaces the published ``Rating``
rows and keeps a ``RatingPoint`` per changed rating as the history charts draw.
"""

from django.db import models

from .bots import Bot, BotVersion
from .leagues import Match


class RatedSet(models.Model):
    """One duplicate set (a finished match) that counts for its pool's ratings.

    Only sets the arena chose (rated leagues, the ladder), fully played, without a no-show, and
    whose bots were all in rated play are recorded; the one-to-one match makes it once only.
    """

    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="rated_set")
    pool = models.CharField(max_length=50)
    games = models.PositiveSmallIntegerField(help_text="Games in the set.")
    players = models.ManyToManyField(BotVersion, related_name="rated_sets")
    created_at = models.DateTimeField(auto_now_add=True)
    coefficient = models.ForeignKey(
        "BaselineCoefficient",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The coefficient its baseline correction used; null while uncorrected.",
    )
    corrected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["pool", "id"], name="ratedset_pool_id")]

    def __str__(self) -> str:
        return f"rated set of {self.match}"


class SetScore(models.Model):
    """What one rated set gave one pair of bot versions (``player`` has the lower id)."""

    rated_set = models.ForeignKey(RatedSet, on_delete=models.CASCADE, related_name="scores")
    pool = models.CharField(max_length=50)
    player = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    opponent = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    twelfths = models.PositiveSmallIntegerField(
        help_text="The player's score in twelfths: 12 won, 6 level, 0 lost."
    )
    controls = models.JSONField(
        null=True,
        blank=True,
        help_text="The luck of the set's deals for the player, one value per control "
        "(games.ratings.baseline.CONTROLS) then per even term (EVEN), weighted for the pair; "
        "null until every game's baseline value is in.",
    )
    band = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="The band of the pair's expected score whose coefficients corrected it.",
    )
    correction = models.IntegerField(
        default=0, help_text="The baseline correction of the score, in millionths of a set."
    )

    class Meta:
        ordering = ["rated_set", "player", "opponent"]
        constraints = [
            models.UniqueConstraint(
                fields=["rated_set", "player", "opponent"], name="set_score_once_per_pair"
            ),
            models.CheckConstraint(
                condition=models.Q(player__lt=models.F("opponent")), name="set_score_pair_ordered"
            ),
            models.CheckConstraint(condition=models.Q(twelfths__lte=12), name="set_score_range"),
        ]
        indexes = [models.Index(fields=["pool", "player", "opponent"], name="setscore_pool_pair")]

    def __str__(self) -> str:
        return f"{self.player} {self.twelfths}/12 against {self.opponent}"


class RatingFit(models.Model):
    """One fit of a pool: when, over which sets, and how it went."""

    pool = models.CharField(max_length=50)
    sets = models.PositiveIntegerField(help_text="Rated sets fitted.")
    last_set_id = models.BigIntegerField(
        default=0, help_text="Highest rated set id included: a newer one calls for a fit."
    )
    corrected_sets = models.PositiveIntegerField(
        default=0,
        help_text="Rated sets whose luck correction the fit included: more call for a fit.",
    )
    players = models.PositiveIntegerField(help_text="Bot versions rated.")
    iterations = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0, help_text="Time the fit itself took.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["pool", "-id"], name="ratingfit_pool_recent")]

    def __str__(self) -> str:
        return f"fit {self.pk} of {self.pool}"


class Rating(models.Model):
    """A bot version's published rating in one pool, from the pool's latest fit.

    ``rank`` is its place in the published ranking, null when it is not there (an old version,
    or no rated set yet); ``los_next`` the likelihood that it is stronger than the next one down.
    """

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="ratings")
    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="ratings")
    pool = models.CharField(max_length=50)
    rating = models.DecimalField(max_digits=8, decimal_places=2)
    rating_low = models.DecimalField(max_digits=8, decimal_places=2)
    rating_high = models.DecimalField(max_digits=8, decimal_places=2)
    provisional = models.BooleanField(default=True)
    sets = models.PositiveIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)
    rank = models.PositiveIntegerField(null=True, blank=True)
    los_next = models.FloatField(null=True, blank=True)
    fit = models.ForeignKey(RatingFit, on_delete=models.SET_NULL, null=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pool", "rank", "-rating", "bot_id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "pool"], name="rating_unique_version_pool"),
        ]
        indexes = [models.Index(fields=["pool", "rank"], name="rating_pool_rank")]

    def __str__(self) -> str:
        return f"{self.version} {self.pool} {self.rating}"


class RatingPoint(models.Model):
    """A bot version's rating after one fit of its pool: one point of its history chart.

    Kept when the rating moved by at least ``services.rating_fits.HISTORY_MIN_CHANGE`` Elo, its
    sets changed or it became established, so a pool's history grows with its results, not with
    the number of fits times the number of bots.
    """

    fit = models.ForeignKey(RatingFit, on_delete=models.CASCADE, related_name="points")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="rating_points")
    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="points")
    pool = models.CharField(max_length=50)
    rating = models.DecimalField(max_digits=8, decimal_places=2)
    rating_low = models.DecimalField(max_digits=8, decimal_places=2)
    rating_high = models.DecimalField(max_digits=8, decimal_places=2)
    provisional = models.BooleanField()
    sets = models.PositiveIntegerField()
    games = models.PositiveIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["bot", "pool", "id"], name="ratingpoint_bot_pool"),
            models.Index(fields=["version", "pool", "id"], name="ratingpoint_version_pool"),
        ]

    def __str__(self) -> str:
        return f"{self.version} {self.rating} at {self.created_at:%Y-%m-%d %H:%M}"


class PairTotal(models.Model):
    """Running totals of one pair of bot versions' rated sets in a pool: what a fit reads.

    Kept in the transaction that records each rated set (``services.rated_sets.rated_set_store``),
    so a fit reads one row per pair met instead of every ``SetScore`` of the pool; it always
    equals the ``SetScore`` rows summed per pair (``ratings_recompute`` checks, and rebuilds).
    """

    pool = models.CharField(max_length=50)
    player = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    opponent = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    sets = models.PositiveIntegerField(default=0, help_text="Rated sets the pair played.")
    twelfths = models.PositiveBigIntegerField(
        default=0, help_text="The player's total score in twelfths of a set."
    )
    correction = models.BigIntegerField(
        default=0, help_text="The sets' baseline corrections summed, in millionths of a set."
    )

    class Meta:
        ordering = ["pool", "player", "opponent"]
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "player", "opponent"], name="pair_total_once_per_pair"
            ),
            models.CheckConstraint(
                condition=models.Q(player__lt=models.F("opponent")), name="pair_total_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player} against {self.opponent}: {self.sets} sets in {self.pool}"


class VersionTotal(models.Model):
    """Running totals of one bot version's rated sets in a pool (its published sets and games),
    kept with ``PairTotal``: a set of three players is three pairs but one set for each."""

    pool = models.CharField(max_length=50)
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    sets = models.PositiveIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["pool", "version"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "version"], name="version_total_once"),
        ]

    def __str__(self) -> str:
        return f"{self.version}: {self.sets} sets in {self.pool}"


class DealBaseline(models.Model):
    """What a rated game's deal gives each team, by the arena's baseline policy
    (``games.ratings.baseline.deal_values``), computed on the ``baselines`` queue after the game
    is stored. ``seed`` is the deal valued: a game is never played again once finished, but the
    value must be of the deal the game was played on."""

    game = models.OneToOneField(
        "tournaments.Game", on_delete=models.CASCADE, related_name="baseline"
    )
    seed = models.BigIntegerField()
    values = models.JSONField(
        help_text="Per team, per control: mean game points over the plays, centred."
    )
    policy = models.CharField(max_length=30)
    plays = models.PositiveIntegerField(help_text="Random plays.")
    cpu_ms = models.FloatField(help_text="CPU time the plays took, in milliseconds.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"baseline of game {self.game_id}"


class BaselineCoefficient(models.Model):
    """The coefficients of the baseline correction for one pool, period and baseline policy:
    per band of the pairs' expected score (``games.ratings.baseline.pair_band``), one beta per
    control and per even term, fitted once, when the period's first set is corrected, on the
    pool's sets of that band corrected before the period began, and the even terms' means
    (``services.baselines.baseline_coefficient``). Frozen: a set's own result never chooses
    the coefficients that correct it, so the correction stays unbiased."""

    pool = models.CharField(max_length=50)
    period_start = models.DateTimeField()
    policy = models.CharField(
        max_length=30, default="greedy,random", help_text="The baseline policy it corrects."
    )
    bands = models.JSONField(
        help_text='Per band: {"betas": one per control then per even term, "samples": '
        'corrected sets it was fitted on, "variance_removed": share of the score\'s variance '
        "removed}."
    )
    means = models.JSONField(
        default=list,
        help_text="Per even term (games.ratings.baseline.EVEN), the mean of the deal's swing "
        "over random deals, taken off each game's.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "period_start"]
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "period_start", "policy"],
                name="baseline_coefficient_once_per_period",
            )
        ]

    def __str__(self) -> str:
        return f"coefficients for {self.pool} from {self.period_start:%Y-%m-%d}"

    def betas(self, band: int) -> tuple[float, ...]:
        """The coefficients of ``band`` (the last band for a higher one)."""
        return tuple(self.bands[min(band, len(self.bands) - 1)]["betas"])
