"""Version tests, fishtest for bots: unrated sets until the SPRT decides (``tournaments.sprt``).

A test is a league of kind ``test`` with its two bots, running and growing: it keeps
``ESCOBA_TEST_SETS_IN_FLIGHT`` sets pending or in play, never more than ``max_sets`` in all.
Whenever one of its sets ends, ``version_test_update`` recounts the finished sets from the
database (so a set is counted once, however often it runs, and a lost call is made good by the
next one or by the ladder tick's ``version_tests_settle``), recomputes the log-likelihood ratio
and either decides (the league finishes; sets not begun are cancelled, sets in play finish but
no longer count) or tops the sets in flight up again.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from tournaments import sprt
from tournaments.models import League, Match, VersionTest
from tournaments.selectors.ladder import league_set_scores
from tournaments.services.challenges import (
    duel_bots,
    duel_league_create,
)
from tournaments.services.league_schedules import league_add_sets
from tournaments.services.league_states import league_lock, league_open
from tournaments.services.notifications import EVENT_VERSION_TEST_FINISHED, notification_send

ERROR_ELO_ORDER = "elo1 must be at least {gap:g} Elo above elo0."
ERROR_ELO_RANGE = "Elo bounds must be between {low} and {high}."
ERROR_ERROR_RATE = "Must be greater than 0 and less than 0.5."
ERROR_MAX_SETS = "max_sets must be between 1 and {high}."

ELO_RANGE = (-1000.0, 1000.0)
# Hypotheses closer than this could not be told apart within any reasonable number of sets.
MIN_ELO_GAP = 1.0
IN_FLIGHT = (Match.Status.PENDING, Match.Status.RUNNING)


def _check_parameters(
    *, elo0: float, elo1: float, alpha: float, beta: float, max_sets: int
) -> None:
    errors: dict[str, list[str]] = {}
    low, high = ELO_RANGE
    for field, value in (("elo0", elo0), ("elo1", elo1)):
        if not low <= value <= high:
            errors[field] = [ERROR_ELO_RANGE.format(low=low, high=high)]
    if "elo1" not in errors and "elo0" not in errors and elo1 - elo0 < MIN_ELO_GAP:
        errors["elo1"] = [ERROR_ELO_ORDER.format(gap=MIN_ELO_GAP)]
    for field, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 0.5:
            errors[field] = [ERROR_ERROR_RATE]
    if not 1 <= max_sets <= settings.ESCOBA_TEST_MAX_SETS:
        errors["max_sets"] = [ERROR_MAX_SETS.format(high=settings.ESCOBA_TEST_MAX_SETS)]
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def version_test_create(
    *,
    user: Any,
    candidate_id: int,
    baseline_id: int,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_sets: int,
) -> VersionTest:
    """Start a test of the user's ``candidate`` against ``baseline`` (theirs, or any bot that
    accepts challenges). Raises ``ValidationError`` per field, ``QuotaExceeded`` past the
    daily quota (``ESCOBA_TESTS_PER_DAY``)."""
    _check_parameters(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_sets=max_sets)
    candidate, baseline = duel_bots(
        user=user, bot=("candidate", candidate_id), opponent=("baseline", baseline_id)
    )
    league = duel_league_create(user=user, bots=(candidate, baseline), kind=League.Kind.TEST)
    league_open(league=league)
    test = VersionTest.objects.create(
        creator=user,
        candidate=candidate,
        baseline=baseline,
        elo0=elo0,
        elo1=elo1,
        alpha=alpha,
        beta=beta,
        max_sets=max_sets,
        league=league,
        counts=[0] * len(sprt.SCORES),
        series=[[0, 0.0]],
    )
    _top_up(test, league)
    return test


def _top_up(test: VersionTest, league: League) -> list[int]:
    """Schedule sets until ``ESCOBA_TEST_SETS_IN_FLIGHT`` are in flight, within ``max_sets``."""
    scheduled = league.matches.count()
    in_flight = league.matches.filter(status__in=IN_FLIGHT).count()
    room = min(settings.ESCOBA_TEST_SETS_IN_FLIGHT - in_flight, test.max_sets - scheduled)
    pair = (test.candidate_id, test.baseline_id)
    # Alternate who sits first in a set's first game (the set swaps seats anyway).
    tables = [pair if (scheduled + i) % 2 == 0 else pair[::-1] for i in range(max(room, 0))]
    return league_add_sets(league=league, tables=tables)


def version_test_update(*, league_id: int) -> VersionTest | None:
    """Recount the test's finished sets and decide, or schedule more (module docstring)."""
    with transaction.atomic():
        test = (
            VersionTest.objects.select_for_update()
            .select_related("league")
            .filter(league_id=league_id)
            .first()
        )
        if test is None or test.status != VersionTest.Status.RUNNING:
            return test
        # The test may end here, finishing its league: locked as every league change is.
        league = league_lock(league_id)
        # by games won, however dealt: the SPRT counts a two-game set's five outcomes
        scores = league_set_scores(league, test.candidate_id, by_games=True)
        counts = [0] * len(sprt.SCORES)
        for played in scores:
            counts[sprt.outcome_index(played.score)] += 1
        aborted = league.matches.filter(status=Match.Status.FINISHED).count() - len(scores)
        budget = test.max_sets - aborted  # a set that could not be scored spent its share
        decision = sprt.decide(
            counts,
            elo0=test.elo0,
            elo1=test.elo1,
            alpha=test.alpha,
            beta=test.beta,
            max_sets=budget,
        )
        estimate = sprt.estimate(counts)
        if len(scores) != test.sets:
            test.series = [*test.series, [len(scores), round(decision.llr, 4)]]
        test.counts, test.sets, test.llr = counts, len(scores), decision.llr
        test.elo, test.elo_low, test.elo_high = (
            (estimate.elo, estimate.low, estimate.high) if estimate else (None, None, None)
        )
        test.status = decision.status
        if decision.status != VersionTest.Status.RUNNING:
            test.finished_at = timezone.now()
            league.status = League.Status.FINISHED
            league.finished_at = test.finished_at
            league.save(update_fields=["status", "finished_at"])
            league.matches.filter(status=Match.Status.PENDING).update(status=Match.Status.CANCELLED)
            _tell_owner(test)
        else:
            _top_up(test, league)
        test.save()
        return test


SUMMARY = {
    VersionTest.Status.ACCEPTED: "accepted (the candidate is at least {elo1:g} Elo better)",
    VersionTest.Status.REJECTED: "rejected (the candidate is at most {elo0:g} Elo better)",
    VersionTest.Status.INCONCLUSIVE: "inconclusive (no decision within {max_sets} sets)",
}


def _tell_owner(test: VersionTest) -> None:
    """``version_test.finished`` to the candidate's owner (who started the test)."""
    verdict = SUMMARY[test.status].format(elo0=test.elo0, elo1=test.elo1, max_sets=test.max_sets)
    elo = ""
    if test.elo is not None:
        elo = f", Elo {test.elo:+.1f} (95 %: {test.elo_low:+.1f} to {test.elo_high:+.1f})"
    notification_send(
        user=test.creator,
        event=EVENT_VERSION_TEST_FINISHED,
        bot=test.candidate,
        data={
            "test": test.pk,
            "status": test.status,
            "summary": f"{verdict} after {test.sets} sets{elo}.",
        },
    )


def version_tests_settle() -> list[int]:
    """Update every running test with no set in flight (its last update was lost); their ids."""
    idle = (
        VersionTest.objects.filter(status=VersionTest.Status.RUNNING)
        .exclude(Q(league__matches__status__in=IN_FLIGHT))
        .values_list("league_id", "id")
    )
    settled = []
    for league_id, test_id in idle:
        version_test_update(league_id=league_id)
        settled.append(test_id)
    return settled
