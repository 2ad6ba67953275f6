"""Leases shared by the workers (tournaments/redis_locks.py): one holder at a time, renewed by
it, freed only by it; on a real Redis, and in the process where the cache is the process's own."""

import time

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from tournaments.redis_locks import held


@pytest.fixture
def redis_cache(settings, redis_url):
    """The default cache on a private redis-server, as in production."""
    settings.CACHES = {
        "default": {
            "BACKEND": "config.redis_cache.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": "lease-test",
        }
    }
    assert isinstance(caches["default"], RedisCache)


def one_holder_at_a_time(name: str) -> None:
    with held(name, 30) as first:
        assert first is not None
        with held(name, 30) as second:
            assert second is None
    with held(name, 30) as again:  # released on exit
        assert again is not None


def a_lease_that_ran_out_is_not_freed_by_its_old_holder(name: str) -> None:
    with held(name, 0.2) as old:
        assert old is not None
        time.sleep(0.4)
        with held(name, 30) as new:  # the old lease ran out: the next holder takes it
            assert new is not None
            assert not old.renew()
        # The old holder's exit released nothing of the new holder's, which released its own.
    with held(name, 30) as after:
        assert after is not None


def a_renewed_lease_outlasts_its_first_term(name: str) -> None:
    with held(name, 0.5) as lease:
        assert lease is not None
        for _ in range(4):
            time.sleep(0.2)
            assert lease.renew()
        with held(name, 30) as other:
            assert other is None


SCENARIOS = [
    one_holder_at_a_time,
    a_lease_that_ran_out_is_not_freed_by_its_old_holder,
    a_renewed_lease_outlasts_its_first_term,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_on_redis(redis_cache, scenario):
    scenario(f"redis-{scenario.__name__}")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_in_the_process(scenario):
    scenario(f"process-{scenario.__name__}")


def test_the_old_holders_release_leaves_the_new_holders_lease(redis_cache):
    old = held("handover", 0.2)
    assert old.__enter__() is not None
    time.sleep(0.4)
    with held("handover", 30) as new:
        assert new is not None
        old.__exit__(None, None, None)  # a non-atomic release would delete the new holder's key
        with held("handover", 30) as third:
            assert third is None
