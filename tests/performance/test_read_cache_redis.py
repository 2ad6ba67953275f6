"""The read cache on a real Redis, through production's cache backend (config/redis_cache.py):
the version bumps' path (one pipelined round trip for every key, tournaments/read_cache.py
``_bump``), which the per-process test cache never runs, and the backend's one client per pool."""

import threading
import uuid

import pytest
from django.core.cache import caches

from tournaments.read_cache import _versions, reads_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_cache(settings, redis_url):
    settings.CACHES = {
        "default": {"BACKEND": "config.redis_cache.RedisCache", "LOCATION": redis_url}
    }
    settings.ESCOBA_READ_CACHE_S = 300


def test_a_change_moves_its_scopes_versions_on_redis_and_no_others(
    redis_cache, django_capture_on_commit_callbacks
):
    seen, changed, untouched = (f"test-{name}:{uuid.uuid4().hex}" for name in "abc")
    before = [int(v) for v in _versions([seen, untouched]).split(".")]

    with django_capture_on_commit_callbacks(execute=True):
        reads_changed(seen, changed)  # ``changed`` has no version yet: it starts from the clock

    after = [int(v) for v in _versions([seen, untouched]).split(".")]
    assert after == [before[0] + 1, before[1]]
    first = int(_versions([changed]))
    with django_capture_on_commit_callbacks(execute=True):
        reads_changed(changed)
    assert int(_versions([changed])) == first + 1


def test_a_change_moves_the_versions_once_when_its_transaction_commits(
    redis_cache, django_capture_on_commit_callbacks
):
    """Before the commit a reader must still be answered from the versions the old rows were
    cached under; after it, from new ones. One bump, not one now and one on commit."""
    scope = f"test-commit:{uuid.uuid4().hex}"
    before = int(_versions([scope]))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        reads_changed(scope)
        assert int(_versions([scope])) == before
    for callback in callbacks:  # the commit
        callback()
    assert int(_versions([scope])) == before + 1


def test_every_backend_object_shares_one_client_and_pool_across_threads(redis_cache):
    """Django builds a backend object per thread (per request under ASGI) and, in its own
    backend, a new Redis client for every operation and new pools for every backend object:
    new connections for every request. Ours shares one pool and one client per server, and the
    one client serves calls from many threads at once."""
    backend = caches["default"]
    client = backend._cache.get_client(write=True)
    assert backend._cache.get_client() is client
    key = f"test-shared:{uuid.uuid4().hex}"
    backend.set(key, 0, 60)
    seen = []

    def add_many() -> None:
        own = caches["default"]  # this thread's backend object
        seen.append((own is backend, own._cache.get_client() is client))
        for _ in range(50):
            own.incr(key)

    threads = [threading.Thread(target=add_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [(False, True)] * 8
    assert backend.get(key) == 400
    assert backend.get_many([key, "test-missing"]) == {key: 400}
    pool = client.connection_pool
    assert pool._created_connections <= 9  # one per thread at most, not one per call
