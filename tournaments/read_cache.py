"""Public reads served from Django's cache, invalidated when results are recorded.

A read names the *scopes* its answer depends on: ``league:12``, ``bot:7``, ``game:901``,
``games`` (any game), ``ratings`` (any pool's fit); ``catalog`` (bots' own fields, deletions)
is part of every read. Each scope has a version in the cache; an answer is cached under the
versions it was built from, and its ETag is made of them. A write that changes what a scope
shows calls ``reads_changed``, the one place versions move (results stored, matches begun or
finished, league transitions, fits published, bots edited). It bumps the versions when the
transaction commits (at once outside one): an answer a reader built from the old rows while the
transaction was open is stored under the old versions, which no reader asks for again, and a
reader that sees the new versions reads the committed rows. A bump before the commit would serve
only a cached read inside the writing transaction, which no request makes.

So a read costs one cache round trip for the versions and, on a hit, one for the body, and no
SQL; a matching ``If-None-Match`` costs the versions alone (a 304). Only anonymous reads are
cached (signed-in pages carry the user's name and owner-only parts). A lost version key is
re-created from the clock, never from 0, so an old entry cannot match it again; entries also
expire after ``ESCOBA_READ_CACHE_S`` seconds (0 turns the cache off), a bound on staleness if a
bump after commit is lost with the cache. When the cache is down, reads are built uncached.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from redis.exceptions import RedisError

from tournaments.metrics import read_counted

logger = logging.getLogger(__name__)

PREFIX = "escoba:read"
# Version keys expire too, so reads of ids that never existed leave nothing behind for long; a
# version re-created from the clock is larger than any it had, so expiry only costs misses.
VERSION_S = 3600


def _version_key(scope: str) -> str:
    return f"{PREFIX}:v:{scope}"


def cache_seconds() -> int:
    return int(settings.ESCOBA_READ_CACHE_S)


def _bump(keys: list[str]) -> None:
    """Move each version up; a missing one starts from the clock (see the module docstring).

    On Redis this is one round trip for all the keys (``SET NX`` from the clock, then ``INCR``,
    in one ``MULTI``): a finished game bumps five scopes, and Django's ``incr`` costs two
    round trips and a new client object per key, which was most of what storing a game cost
    (docs/benchmarks.md, "The pool").
    """
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        now = time.time_ns()
        client = backend._cache.get_client(write=True)
        with client.pipeline(transaction=True) as pipe:
            for key in keys:
                stored = backend.make_and_validate_key(key)
                pipe.set(stored, now, ex=VERSION_S, nx=True)
                pipe.incr(stored)
            pipe.execute()
        return
    for key in keys:
        try:
            cache.incr(key)
        except ValueError:
            cache.add(key, time.time_ns(), VERSION_S)


def reads_changed(*scopes: str) -> None:
    """Invalidate every cached read of ``scopes`` when the transaction commits."""
    keys = [_version_key(scope) for scope in dict.fromkeys(scopes)]
    if not keys or not cache_seconds():
        return

    def bump() -> None:
        try:
            _bump(keys)
        except (RedisError, OSError):
            logger.warning("read cache: could not bump %s", scopes)

    transaction.on_commit(bump, robust=True)


def game_scopes(game_id: int, league_id: int, bot_ids: Iterable[int]) -> list[str]:
    """What a game's result changes: its page, its league's, its bots', every games list."""
    return [f"game:{game_id}", f"league:{league_id}", "games", *(f"bot:{b}" for b in bot_ids)]


def _versions(scopes: list[str]) -> str:
    keys = [_version_key(scope) for scope in scopes]
    found = cache.get_many(keys)
    missing = {key: time.time_ns() for key in keys if key not in found}
    for key, value in missing.items():
        if not cache.add(key, value, VERSION_S):
            value = cache.get(key, value)
        found[key] = value
    return ".".join(str(found[key]) for key in keys)


def cacheable(request: HttpRequest) -> bool:
    """Whether the answer to ``request`` is the same for every anonymous reader."""
    user = getattr(request, "user", None)
    return (
        cache_seconds() > 0
        and request.method in ("GET", "HEAD")
        and not (user is not None and user.is_authenticated)
        and "HTTP_AUTHORIZATION" not in request.META
        # A session (signed out since, perhaps) may hold messages for the next page: not shared.
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def _address(request: HttpRequest) -> str:
    """The URL as this reader asked for it: scheme, host, path and query.

    Answers carry absolute links (the API's pagination), so an answer built for
    ``http://evil.example`` must never be served to a reader of ``https://arena.example``. The
    scheme is what Django judged (a proxy's ``X-Forwarded-Proto`` only behind a named proxy) and
    the host one of ``ALLOWED_HOSTS``.
    """
    return request.build_absolute_uri()


def _etag_matches(request: HttpRequest, etag: str) -> bool:
    header = request.META.get("HTTP_IF_NONE_MATCH", "")
    return any(tag.strip() in (etag, f"W/{etag}", "*") for tag in header.split(","))


def cached_read(
    request: HttpRequest,
    scopes: list[str],
    build: Callable[[], HttpResponse],
    *,
    variant: str = "",
) -> HttpResponse:
    """``build()``'s answer to ``request``, from the cache when the scopes have not changed.

    ``build`` must return a rendered response whose body depends only on the URL (scheme, host,
    path and query), ``variant`` and the rows of ``scopes``. Only 200 answers are stored.
    """
    if not cacheable(request):
        return build()
    try:
        versions = _versions(["catalog", *scopes])
    except (RedisError, OSError):
        return build()
    tag = hashlib.blake2b(
        f"{_address(request)}|{variant}|{versions}".encode(), digest_size=12
    ).hexdigest()
    etag = f'"{tag}"'
    if _etag_matches(request, etag):
        response: HttpResponse = HttpResponseNotModified()
        read_counted(hit=True)
    else:
        key = f"{PREFIX}:body:{tag}"
        try:
            stored = cache.get(key)
        except (RedisError, OSError):
            stored = None
        read_counted(hit=stored is not None)
        if stored is not None:
            content, content_type = stored
            response = HttpResponse(content, content_type=content_type)
        else:
            response = build()
            if response.status_code != 200 or response.streaming:
                return response
            try:
                cache.set(key, (response.content, response["Content-Type"]), cache_seconds())
            except (RedisError, OSError):
                pass
    response["ETag"] = etag
    response["Cache-Control"] = "no-cache"  # may be stored, but revalidated with its ETag
    patch_vary_headers(response, ["Accept", "Cookie", "Authorization"])
    return response
