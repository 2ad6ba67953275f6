"""Two publishers of one pool on PostgreSQL: the one holding older figures waits its turn and
then publishes nothing, so the rankings never go back in time (``pool_fit_publish``), the pool's
first fit included."""

import threading

import pytest
from django.db import connection, transaction

from tournaments.models import Rating, RatingFit
from tournaments.services.rating_fits import pool_fit_compute, pool_fit_publish, ratings_recompute

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("first_fit", [False, True], ids=["later-fit", "pool's-first-fit"])
def test_a_stale_fit_waits_for_the_newer_publisher_then_publishes_nothing(
    make_rated_bot, record_sets, first_fit
):
    a, b = make_rated_bot("greedy"), make_rated_bot("random")
    pool = "classic/2p"
    record_sets(pool, [(a, b, 1.0)], fit=not first_fit)  # a first fit has no fit row to lock
    stalled = pool_fit_compute(pool=pool)  # a holder that then stalls past its lease
    record_sets(pool, [(a, b, 0.0), (a, b, 0.0)], fit=False)
    newer = pool_fit_compute(pool=pool)  # the holder that took the pool over
    written, release, outcome, errors = threading.Event(), threading.Event(), [], []

    def publish_newer_and_hold() -> None:
        try:
            with transaction.atomic():
                pool_fit_publish(result=newer)
                written.set()
                release.wait(10)  # not committed yet while the stale one arrives
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            errors.append(error)
        finally:
            connection.close()

    def publish_stale() -> None:
        try:
            outcome.append(pool_fit_publish(result=stalled))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)
        finally:
            connection.close()

    first = threading.Thread(target=publish_newer_and_hold)
    first.start()
    assert written.wait(10)
    second = threading.Thread(target=publish_stale)
    second.start()
    second.join(0.5)
    assert second.is_alive(), "the stale publisher did not wait for the one writing"
    release.set()
    first.join(10)
    second.join(10)
    assert errors == []
    assert outcome == [None]
    assert RatingFit.objects.filter(pool=pool).latest("id").last_set_id == newer.last_set_id
    assert Rating.objects.get(bot=a).sets == 3
    assert ratings_recompute().exact
