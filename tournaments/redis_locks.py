"""Leases that every worker shares: redis-py's `Lock` on the cache's Redis.

Periodic work that must never run twice at once (`bots.check_due`, one bot's scheduled check,
one pool's rating fit) takes a lease here. A lease is held for `timeout_s` at most, so a holder
that died frees it by itself; a holder still working renews it (`Lease.renew`); and only the
holder releases it, in one step (redis-py checks the token and deletes the key in one Lua
script), so a holder whose lease ran out never frees the next holder's.

Where the default cache is not Redis (the tests' cache, private to each process) no other
process can hold a lease, and there is no Redis to ask: the same leases are then kept in this
process.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import LockError


class Lease:
    """A lease this process holds on `name`; `renew` gives it `timeout_s` more."""

    def __init__(self, name: str, timeout_s: float) -> None:
        backend = caches["default"]
        self.name = name = backend.make_key(f"lock:{name}")
        self.timeout_s = timeout_s
        self._lock = (
            backend._cache.get_client(write=True).lock(name, timeout=timeout_s)
            if isinstance(backend, RedisCache)
            else _ProcessLock(name, timeout_s)
        )

    def acquire(self) -> bool:
        """Take the lease if nobody holds it; False at once if somebody does."""
        return bool(self._lock.acquire(blocking=False))

    def renew(self) -> bool:
        """Another `timeout_s` from now; False if the lease ran out and is not ours any more."""
        try:
            return bool(self._lock.reacquire())
        except LockError:
            return False

    def release(self) -> None:
        """Free the lease if it is still ours (one that ran out is left to its new holder)."""
        try:
            self._lock.release()
        except LockError:
            pass


@contextmanager
def held(name: str, timeout_s: float) -> Iterator[Lease | None]:
    """The lease on `name` for the `with` block, or None (and nothing held) when another
    holder has it. Released on exit if still ours."""
    lease = Lease(name, timeout_s)
    if not lease.acquire():
        yield None
        return
    try:
        yield lease
    finally:
        lease.release()


_process_leases: dict[str, tuple[str, float]] = {}  # name -> (token, monotonic expiry)
_process_guard = threading.Lock()


class _ProcessLock:
    """redis-py's `Lock` methods that `Lease` uses, over this process's memory."""

    def __init__(self, name: str, timeout_s: float) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self.token = uuid.uuid4().hex

    def _ours(self, now: float) -> bool:
        token, expires = _process_leases.get(self.name, ("", 0.0))
        return token == self.token and expires > now

    def acquire(self, blocking: bool = False) -> bool:
        now = time.monotonic()
        with _process_guard:
            _, expires = _process_leases.get(self.name, ("", 0.0))
            if expires > now:
                return False
            _process_leases[self.name] = (self.token, now + self.timeout_s)
            return True

    def reacquire(self) -> bool:
        now = time.monotonic()
        with _process_guard:
            if not self._ours(now):
                raise LockError("not held")
            _process_leases[self.name] = (self.token, now + self.timeout_s)
            return True

    def release(self) -> None:
        with _process_guard:
            if not self._ours(time.monotonic()):
                raise LockError("not held")
            del _process_leases[self.name]
