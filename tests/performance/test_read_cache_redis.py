"""The read cache's version bumps on a real Redis: production's path (one pipelined round trip
for every key, tournaments/read_cache.py ``_bump``), which the per-process test cache never runs."""

import uuid

import pytest

from tournaments.read_cache import _versions, reads_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_cache(settings, redis_url):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    }
    settings.ESCOBA_READ_CACHE_S = 300


def test_a_change_moves_its_scopes_versions_on_redis_and_no_others(redis_cache):
    seen, changed, untouched = (f"test-{name}:{uuid.uuid4().hex}" for name in "abc")
    before = [int(v) for v in _versions([seen, untouched]).split(".")]

    reads_changed(seen, changed)  # ``changed`` has no version yet: it starts from the clock

    after = [int(v) for v in _versions([seen, untouched]).split(".")]
    assert after == [before[0] + 1, before[1]]
    first = int(_versions([changed]))
    reads_changed(changed)
    assert int(_versions([changed])) == first + 1
