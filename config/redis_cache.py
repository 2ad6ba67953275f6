"""Django's Redis cache backend, with one connection pool and one client per Redis server for
the whole process, where Django's builds them again and again.

Django keeps a cache backend object per thread, and under ASGI per request (``caches`` is an
``asgiref`` local; Django ticket #33625): each one built its own connection pools, so under
uvicorn every request opened new TCP connections to Redis, and redis-py 8 looks its own version
up in the installed packages' metadata for every new connection. On top of that, Django's
``RedisCacheClient.get_client`` builds a new ``redis.Redis`` for every cache operation, whose
constructor fills a table of a few hundred response callbacks. An anonymous read answered from
the read cache makes several cache operations (the throttle's script, the versions, the body),
so those constructors would be the largest part of its CPU (docs/benchmarks.md, "Reads at scale").

A redis-py pool and a client over it are thread-safe (a command takes a connection from the
pool and gives it back), so every backend object of the process shares one pool per server and
options, and one client per pool. A forked child does not reuse its parent's sockets: the pool
notices the new process id and opens its own.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient

_shared: dict[tuple[str, str], tuple[Any, Any]] = {}  # (server, options) -> (pool, client)
_shared_lock = threading.Lock()


class _SharedClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Which shared pool this client's options pick, worked out once, not per operation.
        self._options_key = repr(sorted(self._pool_options.items()))

    def _pool_and_client(self, write: bool) -> tuple[Any, Any]:
        server = self._servers[self._get_connection_pool_index(write)]
        key = (server, self._options_key)
        found = _shared.get(key)
        if found is None:
            with _shared_lock:
                found = _shared.get(key)
                if found is None:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    found = _shared[key] = (pool, self._client(connection_pool=pool))
        return found

    def _get_connection_pool(self, write: bool) -> Any:
        return self._pool_and_client(write)[0]

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        return self._pool_and_client(write)[1]


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` sharing its pools and clients."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _SharedClient
