"""The baseline correction of rated sets: the luck of fresh deals taken out (docs/ratings.md).

Rated sets are dealt afresh, game by game, so no bot ever holds a deal another saw; the luck
that duplicate deals used to cancel is measured instead (``games.ratings.baseline``):

1. **A rated set's deals are valued after the set is recorded.** ``rated_set_record`` sends
   ``baselines.correct_set`` (the ``baselines`` queue, its own worker) once its transaction
   commits, one message per set (``services.rated_sets.rated_set_deals_value``);
   ``deal_baseline_compute`` plays each deal with the arena's in-process policy and stores a
   ``DealBaseline``. Nothing of a game waits for it.
2. **A rated set is corrected once all its games are valued** (``rated_set_correct``): each pair's
   controls (the luck of the set's deals for the lower version, less the other's, one per
   control, weighted by how far from even the pair is expected to be) and even terms (how
   swingy its deals were, less the frozen mean, weighted by the pair's expected edge), times
   the coefficients of the pair's band for the pool and period, are taken from its score
   (``SetScore.correction``, ``PairTotal.correction``, millionths of a set, so sums are exact)
   and a refit is requested. Until then the set counts as played: a raw score is as unbiased as
   a corrected one (the correction has mean zero), only noisier.
3. **The coefficients are frozen per pool, period and policy** (``baseline_coefficient``):
   fitted once, when the period's first set is corrected, band by band on the pool's sets
   corrected before the period began (``ESCOBA_BASELINE_PERIOD_DAYS``), ``DEFAULT_BETAS`` for a
   band with too few; the even terms' means (``_even_means``: the pool's latest valued deals)
   are frozen beside them.
4. **The lag is bounded**: ``baselines_sweep`` (beat, every ``ESCOBA_SWEEP_INTERVAL_S``) values
   rated games left without a value and corrects sets whose values are all in; a fit lost after a
   correction is ``ratings.sweep``'s (beat, the same interval), which refits a pool with a set or
   a correction newer than its latest fit. A lost message delays a correction by one sweep.
"""

from __future__ import annotations

import datetime
import logging
import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from games.engine import Ruleset
from games.ratings.baseline import (
    BAND_EDGES,
    CONTROLS,
    CORRECTION_UNIT,
    DEFAULT_BETAS,
    EVEN,
    POLICY,
    TERMS,
    DealGame,
    beta_fit,
    deal_values,
    edge_weight,
    pair_band,
    pair_controls,
    pair_even_terms,
    pair_weight,
    score_correction,
    swing_means,
)
from games.ratings.fit import MEAN
from games.ratings.sets import game_participants
from tournaments import queueing
from tournaments.models import (
    BaselineCoefficient,
    BotVersion,
    DealBaseline,
    Game,
    PairTotal,
    RatedSet,
    Rating,
    SetScore,
)
from tournaments.services.rating_fits import ratings_fit_request

logger = logging.getLogger(__name__)

EPOCH = datetime.datetime(2026, 1, 5, tzinfo=datetime.UTC)  # a Monday: periods start on Mondays
# A game finished this long ago without a value, or a set left uncorrected, is the sweep's.
SWEEP_AFTER_S = 30


def deal_baseline_compute(*, game_id: int) -> DealBaseline | None:
    """Value the deal of a finished game of a rated league (idempotent: a value of the same
    deal is kept). Returns None for a game that is not finished or not rated play."""
    game = Game.objects.select_related("league").filter(pk=game_id).first()
    if game is None or game.status != Game.Status.FINISHED or not game.league.rated:
        return None
    found = DealBaseline.objects.filter(game=game).first()
    if found is not None and found.seed == game.seed and found.policy == POLICY:
        return found
    plays = settings.ESCOBA_BASELINE_PLAYS
    started = time.process_time()
    values = deal_values(Ruleset.from_dict(game.league.ruleset), game.seed, plays)
    cpu_ms = 1000 * (time.process_time() - started)
    fields = {
        "seed": game.seed,
        "values": [list(team) for team in values],
        "policy": POLICY,
        "plays": plays,
    }
    try:
        baseline, _ = DealBaseline.objects.update_or_create(
            game=game, defaults={**fields, "cpu_ms": cpu_ms}
        )
    except IntegrityError:  # another delivery stored it first
        baseline = DealBaseline.objects.get(game=game)
    return baseline


def period_start(moment: datetime.datetime) -> datetime.datetime:
    """The start of the coefficient period holding ``moment``."""
    length = datetime.timedelta(days=settings.ESCOBA_BASELINE_PERIOD_DAYS)
    return EPOCH + ((moment - EPOCH) // length) * length


def baseline_coefficient(
    *, pool: str, moment: datetime.datetime | None = None
) -> BaselineCoefficient:
    """The pool's coefficients for the period holding ``moment`` (now) and today's ``POLICY``:
    made the first time they are asked for, band by band from the pool's sets of the band
    corrected before the period began, with the even terms' means (``_even_means``), then never
    changed. Without the means the even terms' coefficients are 0 for the period."""
    start = period_start(moment or timezone.now())
    period = BaselineCoefficient.objects.filter(pool=pool, period_start=start, policy=POLICY)
    found = period.first()
    if found is not None:
        return found
    bands = []
    for band in range(len(BAND_EDGES) + 1):
        samples = SetScore.objects.filter(
            pool=pool, band=band, controls__isnull=False, rated_set__corrected_at__lt=start
        ).values_list("twelfths", "controls")
        fitted = beta_fit(
            (
                (twelfths / 12, controls)
                for twelfths, controls in samples.iterator()
                if len(controls) == TERMS
            ),
            DEFAULT_BETAS[band],
        )
        bands.append(
            {
                "betas": list(fitted.betas),
                "samples": fitted.samples,
                "variance_removed": fitted.variance_removed,
            }
        )
    means = _even_means(pool, start)
    if not means:
        for band in bands:
            band["betas"][len(CONTROLS) :] = [0.0] * len(EVEN)
    try:
        with transaction.atomic():
            return BaselineCoefficient.objects.create(
                pool=pool, period_start=start, policy=POLICY, bands=bands, means=means
            )
    except IntegrityError:  # made meanwhile by another correction: the first one stands
        return period.get()


def _even_means(pool: str, start: datetime.datetime) -> list[float]:
    """The mean swing (``swing_means``) of the pool's latest ``ESCOBA_BASELINE_MEAN_DEALS``
    rated deals valued by today's policy before ``start``: rated deals are random deals, and
    the value of each is stored already, so the mean costs a read. Empty when the pool has
    fewer (a new pool, or a new policy)."""
    wanted = settings.ESCOBA_BASELINE_MEAN_DEALS
    found = list(
        DealBaseline.objects.filter(
            game__match__rated_set__pool=pool,
            policy=POLICY,
            plays=settings.ESCOBA_BASELINE_PLAYS,
            created_at__lt=start,
        )
        .order_by("-id")
        .values_list("values", flat=True)[:wanted]
    )
    return list(swing_means(found)) if found and len(found) >= wanted else []


def _expected_scores(pool: str, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """Each pair's expected score from the ratings published now (before this set's own fit
    counted its correction): the weight of ``pair_weight`` and the band of ``pair_band``; 1500
    for a version not yet rated."""
    versions = {v for pair in pairs for v in pair}
    rated = dict(
        Rating.objects.filter(pool=pool, version_id__in=versions).values_list(
            "version_id", "rating"
        )
    )
    return {
        (a, b): 1 / (1 + 10 ** ((float(rated.get(b, MEAN)) - float(rated.get(a, MEAN))) / 400))
        for a, b in pairs
    }


@transaction.atomic
def rated_set_correct(*, match_id: int) -> RatedSet | None:
    """Apply the baseline correction to the match's rated set once every game's deal is valued;
    None, writing nothing, when there is no rated set, it is corrected already or a value is
    missing. Requests a refit of the pool on commit."""
    rated_set = RatedSet.objects.select_for_update().filter(match_id=match_id).first()
    if rated_set is None or rated_set.corrected_at is not None:
        return None
    # The set's scores come from its finished games; an aborted game has no result to correct.
    finished = Game.objects.filter(match_id=match_id, status=Game.Status.FINISHED)
    games = list(finished.select_related("league", "baseline"))
    if not games:
        return None
    values = {}
    for game in games:
        baseline = getattr(game, "baseline", None)
        if baseline is None or baseline.seed != game.seed or baseline.policy != POLICY:
            return None
        values[game.id] = tuple(tuple(team) for team in baseline.values)
    team_of = Ruleset.from_dict(games[0].league.ruleset).team_of
    version_of = dict(BotVersion.objects.filter(rated_sets=rated_set).values_list("bot_id", "id"))
    deal_games = [
        DealGame(
            participants=tuple(
                (version_of[bot_id], team)
                for bot_id, team in game_participants(game.seating, team_of)
            ),
            values=values[game.id],
        )
        for game in games
    ]
    controls = pair_controls(deal_games)
    expected = _expected_scores(rated_set.pool, list(controls))
    coefficient = baseline_coefficient(pool=rated_set.pool)
    means = coefficient.means
    evens = (
        pair_even_terms(deal_games, means) if means else {p: (0.0,) * len(EVEN) for p in controls}
    )
    for score in SetScore.objects.filter(rated_set=rated_set).order_by("player_id", "opponent_id"):
        pair = (score.player_id, score.opponent_id)
        weight, edge = pair_weight(expected[pair]), edge_weight(expected[pair])
        weighted = [c * weight for c in controls[pair]] + [e * edge for e in evens[pair]]
        band = pair_band(expected[pair])
        betas = coefficient.betas(band)
        correction = round(score_correction(weighted, betas) * CORRECTION_UNIT)
        SetScore.objects.filter(pk=score.pk).update(
            controls=weighted, band=band, correction=correction
        )
        PairTotal.objects.filter(
            pool=rated_set.pool, player_id=pair[0], opponent_id=pair[1]
        ).update(correction=F("correction") + correction)
    rated_set.coefficient = coefficient
    rated_set.corrected_at = timezone.now()
    rated_set.save(update_fields=["coefficient", "corrected_at"])
    ratings_fit_request(pool=rated_set.pool)
    return rated_set


def baselines_sweep(*, older_than_s: float = SWEEP_AFTER_S) -> dict[str, int]:
    """Make good what a lost message left behind (for Celery beat): value the games of rated
    sets finished more than ``older_than_s`` ago that have no value of their deal, correct the
    rated sets whose values are all in (each correction requests its refit; a refit lost after
    it is ``ratings_sweep``'s, beat's other sweep). A game of a set not recorded (still in play,
    or one that counts for nobody) needs no value: its set's one message values it if it is."""
    cut = timezone.now() - datetime.timedelta(seconds=older_than_s)
    unvalued = list(
        Game.objects.filter(
            match__rated_set__isnull=False, status=Game.Status.FINISHED, finished_at__lt=cut
        )
        .filter(
            Q(baseline__isnull=True) | ~Q(baseline__seed=F("seed")) | ~Q(baseline__policy=POLICY)
        )
        .values_list("id", flat=True)[:1000]
    )
    if unvalued:
        queueing.baselines_enqueue(unvalued)
    uncorrected = list(
        RatedSet.objects.filter(corrected_at__isnull=True, created_at__lt=cut).values_list(
            "match_id", flat=True
        )[:1000]
    )
    corrected = sum(rated_set_correct(match_id=m) is not None for m in uncorrected)
    return {"valued": len(unvalued), "corrected": corrected}
