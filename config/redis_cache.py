"""Django's Redis cache backend, keeping one client object per connection pool.

Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` for every cache operation.
With redis-py 8 that constructor fills the client's table of response callbacks (a few hundred
dictionary stores) each time, and an anonymous API read that the read cache answers makes six
cache operations (the throttle's get and set, the versions, the body): the constructors were
the largest single part of such a read's CPU (docs/benchmarks.md, "Reads at scale"). A client is
a thin, thread-safe handle on its pool (it takes a connection from the pool per command), so one
per pool serves every call; the pools themselves are Django's, unchanged.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _OneClientPerPool(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` that reuses its Redis client objects."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _OneClientPerPool
