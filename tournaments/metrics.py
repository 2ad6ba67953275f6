"""The arena's figures for its operator: Prometheus metrics at ``/metrics`` and the admin's
*Arena health* page, from one snapshot (``arena_figures``).

Where each figure lives, so that it stays right with any number of web and worker machines:

- **Counters** (games and moves stored, faults by kind, bot call latencies, read cache hits and
  misses) are in one Redis hash, ``escoba:metrics``, added to by whichever process did the work:
  the worker that stored a game adds its figures when its transaction commits (``game_counted``,
  called by ``services.game_results.game_finish``: a game stored once is counted once, a game played
  again after a service fault is not counted until it is stored), a web process adds its read
  cache hits and misses every second at most (``read_counted``). Any web process answers a
  scrape with the totals of every machine. A Redis that loses its data starts them from 0, which
  Prometheus' ``rate()`` reads as a counter reset, as it does a restarted exporter's.
- **Gauges** are read when scraped: queue depths from the broker (``queueing.queue_depths``),
  live streams from Redis (the subscribers of the live channels: a page's stream subscribes
  once per open stream, a game's once per web process following it, however many viewers that
  process serves), matches in flight and the rating fit lag from the database.

prometheus-client's multiprocess mode was not used: it sums files of one host's processes, so
with workers on several machines each host would have to be scraped and a worker's counts would
vanish with its container; the Redis hash has neither problem.
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry
from redis.exceptions import RedisError

from tournaments import queueing
from tournaments.live_feed import KEY_PREFIX as LIVE_PREFIX
from tournaments.models import League, Match, RatedSet, RatingFit

if TYPE_CHECKING:
    from tournaments.bot_calls.runner import PlayCall

logger = logging.getLogger(__name__)

KEY = "escoba:metrics"
# Upper bounds (seconds) of the bot call latency histogram: a bot's move deadline is 1 s by
# default, so the buckets are finest below it; 10 s catches deadlines raised by a league.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
INF = float("inf")
# A web process sends its read cache tallies at most this often.
READ_FLUSH_S = 1.0
SEP = "|"


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    """One client (a thread-safe connection pool) per Redis URL, with the project's timeouts."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT_S,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT_S,
    )


def metrics_redis() -> redis.Redis:
    return _client(settings.REDIS_URL)


class _Outage:
    """Logs a Redis outage once, not once per game or request, and its end."""

    def __init__(self) -> None:
        self.down = False

    def failed(self, what: str) -> None:
        if not self.down:
            logger.warning("metrics: Redis unreachable, %s not counted until it is back", what)
        self.down = True

    def ok(self) -> None:
        if self.down:
            logger.info("metrics: Redis reachable again")
        self.down = False


_outage = _Outage()


def _field(*parts: str) -> str:
    return SEP.join(parts)


def _bucket(seconds: float) -> str:
    for bound in LATENCY_BUCKETS:
        if seconds <= bound:
            return repr(bound)
    return "+Inf"


def game_increments(*, pool: str, moves: int, calls: Iterable[PlayCall]) -> dict[str, float]:
    """What one stored game adds to the hash: a game and its moves, each fault by kind, and each
    bot call's latency in its (non-cumulative) bucket, with the latencies' sum (the count is the
    buckets' total)."""
    adds: Counter[str] = Counter({_field("games", pool): 1, _field("moves", pool): moves})
    total = 0.0
    for call in calls:
        seconds = call.latency_ms / 1000
        total += seconds
        adds[_field("latency", pool, _bucket(seconds))] += 1
        if call.fault is not None:
            adds[_field("faults", pool, str(call.fault.kind))] += 1
    values: dict[str, float] = dict(adds)
    values[_field("latency_sum", pool)] = total
    return values


def _send(values: dict[str, float], what: str) -> None:
    try:
        with metrics_redis().pipeline(transaction=False) as pipe:
            for name, value in values.items():
                if isinstance(value, int):
                    pipe.hincrby(KEY, name, value)
                else:
                    pipe.hincrbyfloat(KEY, name, value)
            pipe.execute()
    except (RedisError, OSError):
        _outage.failed(what)
    else:
        _outage.ok()


def game_counted(*, pool: str, moves: int, calls: Iterable[PlayCall]) -> None:
    """Count a stored game once its transaction commits (call inside it). One Redis round trip
    per game; an unreachable Redis loses the count, never the game."""
    values = game_increments(pool=pool, moves=moves, calls=calls)
    transaction.on_commit(lambda: _send(values, "games"), robust=True)


class _ReadTally:
    """This process's read cache hits and misses not sent yet: a read costs no Redis round trip
    of its own, and the tallies go out with the first read a second after the last send."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.sent_at = time.monotonic()

    def add(self, result: str) -> None:
        with self.lock:
            self.counts[result] += 1
            if time.monotonic() - self.sent_at < READ_FLUSH_S:
                return
        self.flush()

    def flush(self) -> None:
        with self.lock:
            counts, self.counts = self.counts, Counter()
            self.sent_at = time.monotonic()
        if counts:
            _send({_field("reads", result): n for result, n in counts.items()}, "reads")


_reads = _ReadTally()
atexit.register(_reads.flush)  # a web process that stops sends what it tallied


def read_counted(*, hit: bool) -> None:
    """Count one cacheable read: served from the cache (or a 304) or built afresh."""
    _reads.add("hit" if hit else "miss")


def reads_flush() -> None:
    """Send this process's read tallies now (tests; a process about to exit)."""
    _reads.flush()


@dataclass
class PoolFigures:
    games: int = 0
    moves: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    # Cumulative counts per upper bound, as Prometheus' histograms have them, ending with +Inf.
    latency_buckets: list[tuple[str, int]] = field(default_factory=list)
    latency_sum_s: float = 0.0
    matches_in_flight: int = 0
    fit_lag_s: float = 0.0
    sets_unfitted: int = 0

    @property
    def latency_count(self) -> int:
        return self.latency_buckets[-1][1] if self.latency_buckets else 0

    @property
    def latency_mean_ms(self) -> float | None:
        return 1000 * self.latency_sum_s / self.latency_count if self.latency_count else None

    def latency_quantile_ms(self, q: float) -> float | None:
        """The bucket bound the q-th call's latency lies under (an upper estimate)."""
        count = self.latency_count
        if not count:
            return None
        for bound, cumulative in self.latency_buckets:
            if cumulative >= q * count:
                return 1000 * float(bound)
        return None


@dataclass
class ArenaFigures:
    """One reading of every figure; ``problems`` names what could not be read."""

    pools: dict[str, PoolFigures] = field(default_factory=dict)
    queues: dict[str, int] = field(default_factory=dict)
    live_streams: dict[str, int] = field(default_factory=dict)
    read_hits: int = 0
    read_misses: int = 0
    problems: list[str] = field(default_factory=list)

    def pool(self, name: str) -> PoolFigures:
        return self.pools.setdefault(name, PoolFigures())

    @property
    def read_hit_ratio(self) -> float | None:
        total = self.read_hits + self.read_misses
        return self.read_hits / total if total else None


def _counters(figures: ArenaFigures, client: redis.Redis) -> None:
    raw = client.hgetall(KEY)
    buckets: dict[str, dict[str, int]] = {}
    for name_bytes, value_bytes in raw.items():
        parts = name_bytes.decode().split(SEP)
        value = value_bytes.decode()
        match parts:
            case ["games", pool]:
                figures.pool(pool).games = int(value)
            case ["moves", pool]:
                figures.pool(pool).moves = int(value)
            case ["faults", pool, kind]:
                figures.pool(pool).faults[kind] = int(value)
            case ["latency", pool, bound]:
                buckets.setdefault(pool, {})[bound] = int(value)
            case ["latency_sum", pool]:
                figures.pool(pool).latency_sum_s = float(value)
            case ["reads", "hit"]:
                figures.read_hits = int(value)
            case ["reads", "miss"]:
                figures.read_misses = int(value)
    for pool, counts in buckets.items():
        cumulative, rows = 0, []
        for bound in (*(repr(b) for b in LATENCY_BUCKETS), "+Inf"):
            cumulative += counts.get(bound, 0)
            rows.append((bound, cumulative))
        figures.pool(pool).latency_buckets = rows


def _live_streams(figures: ArenaFigures, client: redis.Redis) -> None:
    """Open live streams by topic (``game``, ``league``, ...): each stream holds one subscription
    to its channel in Redis, whichever web process or machine serves it."""
    channels = client.pubsub_channels(f"{LIVE_PREFIX}:*")
    counts: Counter[str] = Counter()
    if channels:
        for channel, subscribers in client.pubsub_numsub(*channels):
            topic = channel.decode().removeprefix(f"{LIVE_PREFIX}:").split(":")[0]
            counts[topic] += int(subscribers)
    figures.live_streams = dict(counts)


def _pools() -> list[str]:
    """The pools with rated play or games: the ladder's and every rated league's."""
    pools = set(settings.ESCOBA_LADDER_POOLS)
    rated = League.objects.filter(rated=True).order_by()  # no ordering: DISTINCT pool alone
    pools.update(rated.values_list("pool", flat=True).distinct())
    return sorted(pools)


def _database(figures: ArenaFigures) -> None:
    """Matches in flight per pool, and how far each pool's published fit is behind its sets:
    the age of the oldest rated set the latest fit did not include (0 when none)."""
    running = (
        Match.objects.filter(status=Match.Status.RUNNING)
        .values("league__pool")
        .annotate(n=Count("id"))
    )
    for row in running:
        figures.pool(row["league__pool"]).matches_in_flight = row["n"]
    now = timezone.now()
    for pool in _pools():
        fitted = (
            RatingFit.objects.filter(pool=pool).order_by("-id").values_list("last_set_id").first()
        )
        behind = RatedSet.objects.filter(pool=pool, id__gt=fitted[0] if fitted else 0)
        oldest = behind.order_by("id").values_list("created_at", flat=True).first()
        figures.pool(pool).fit_lag_s = (now - oldest).total_seconds() if oldest else 0.0
        figures.pool(pool).sets_unfitted = behind.count() if oldest else 0


def arena_figures() -> ArenaFigures:
    """Read every figure now. What cannot be read (Redis or the broker down) is left out and
    named in ``problems``, so the rest is still shown."""
    figures = ArenaFigures()
    client = metrics_redis()
    for read, what in ((_counters, "counters"), (_live_streams, "live streams")):
        try:
            read(figures, client)
        except (RedisError, OSError):
            figures.problems.append(f"{what}: Redis unreachable")
    try:
        figures.queues = queueing.queue_depths()
    except (*queueing.BROKER_ERRORS, OSError):
        figures.problems.append("queue depths: the broker is unreachable")
    _database(figures)
    return figures


SAMPLES_KEY = "escoba:metrics:samples"
# The health page's rates are over at least this long (the newest sample this old or older).
RATE_MIN_S = 10.0
SAMPLES_KEPT = 30


@dataclass
class Rates:
    """Games and moves per second by pool over the last ``over_s`` seconds."""

    over_s: float
    games: dict[str, float]
    moves: dict[str, float]


def figures_rates(figures: ArenaFigures) -> Rates | None:
    """Rates since an earlier reading, for a page without Prometheus' ``rate()``: each call keeps
    this reading's counters in Redis (the last ``SAMPLES_KEPT``) and compares with the newest one
    at least ``RATE_MIN_S`` old. None the first time, or while Redis cannot be read."""
    now = time.time()
    sample = {
        "t": now,
        "games": {name: pool.games for name, pool in figures.pools.items()},
        "moves": {name: pool.moves for name, pool in figures.pools.items()},
    }
    try:
        client = metrics_redis()
        with client.pipeline(transaction=True) as pipe:
            pipe.lrange(SAMPLES_KEY, 0, -1)
            pipe.lpush(SAMPLES_KEY, json.dumps(sample))
            pipe.ltrim(SAMPLES_KEY, 0, SAMPLES_KEPT - 1)
            pipe.expire(SAMPLES_KEY, 3600)
            earlier = pipe.execute()[0]
    except (RedisError, OSError):
        return None
    for raw in earlier:
        old = json.loads(raw)
        over = now - old["t"]
        if over >= RATE_MIN_S:
            return Rates(
                over_s=over,
                games={
                    k: max(0, v - old["games"].get(k, 0)) / over for k, v in sample["games"].items()
                },
                moves={
                    k: max(0, v - old["moves"].get(k, 0)) / over for k, v in sample["moves"].items()
                },
            )
    return None


# Metric names, as the dashboard (docs/grafana/escoba-arena.json) and tests name them.
GAMES = "escoba_games"
MOVES = "escoba_moves"
FAULTS = "escoba_faults"
LATENCY = "escoba_bot_call_latency_seconds"
QUEUE_DEPTH = "escoba_queue_depth"
MATCHES_IN_FLIGHT = "escoba_matches_in_flight"
FIT_LAG = "escoba_rating_fit_lag_seconds"
SETS_UNFITTED = "escoba_rating_sets_unfitted"
LIVE_STREAMS = "escoba_live_streams"
READS = "escoba_read_cache_reads"
SCRAPE_PROBLEMS = "escoba_metrics_unavailable"


def metric_families(figures: ArenaFigures) -> Iterator[Metric]:
    """The figures as Prometheus metric families (counters get ``_total`` when exposed)."""
    games = CounterMetricFamily(GAMES, "Games stored, by rating pool.", labels=["pool"])
    moves = CounterMetricFamily(MOVES, "Moves played in stored games, by pool.", labels=["pool"])
    faults = CounterMetricFamily(
        FAULTS, "Bot faults in stored games, by pool and kind.", labels=["pool", "kind"]
    )
    latency = HistogramMetricFamily(
        LATENCY, "Latency of the arena's move calls to bots, in stored games.", labels=["pool"]
    )
    in_flight = GaugeMetricFamily(
        MATCHES_IN_FLIGHT, "Matches being played now, by pool.", labels=["pool"]
    )
    lag = GaugeMetricFamily(
        FIT_LAG,
        "Age of the oldest rated set the pool's published fit does not include (0: none).",
        labels=["pool"],
    )
    unfitted = GaugeMetricFamily(
        SETS_UNFITTED, "Rated sets the pool's published fit does not include.", labels=["pool"]
    )
    for name, pool in sorted(figures.pools.items()):
        games.add_metric([name], pool.games)
        moves.add_metric([name], pool.moves)
        for kind, n in sorted(pool.faults.items()):
            faults.add_metric([name, kind], n)
        if pool.latency_buckets:
            latency.add_metric([name], pool.latency_buckets, pool.latency_sum_s)
        in_flight.add_metric([name], pool.matches_in_flight)
        lag.add_metric([name], pool.fit_lag_s)
        unfitted.add_metric([name], pool.sets_unfitted)
    queues = GaugeMetricFamily(
        QUEUE_DEPTH, "Tasks waiting in a Celery queue (not those running).", labels=["queue"]
    )
    for queue, depth in sorted(figures.queues.items()):
        queues.add_metric([queue], depth)
    live = GaugeMetricFamily(LIVE_STREAMS, "Live event streams open, by topic.", labels=["topic"])
    for topic, n in sorted(figures.live_streams.items()):
        live.add_metric([topic], n)
    reads = CounterMetricFamily(
        READS, "Cacheable public reads, served from the cache or not.", labels=["result"]
    )
    reads.add_metric(["hit"], figures.read_hits)
    reads.add_metric(["miss"], figures.read_misses)
    unavailable = GaugeMetricFamily(
        SCRAPE_PROBLEMS, "1 for each source of figures this scrape could not read.", labels=["what"]
    )
    for problem in figures.problems:
        unavailable.add_metric([problem.split(":")[0]], 1)
    yield from (games, moves, faults, latency, in_flight, lag, unfitted, queues, live, reads)
    yield unavailable


class ArenaCollector(Collector):
    """Reads the figures at every scrape."""

    def collect(self) -> Iterator[Metric]:
        yield from metric_families(arena_figures())


def metrics_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector())
    return registry


@lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def address_allowed(address: str) -> bool:
    """Whether ``address`` is inside one of ``ESCOBA_METRICS_NETWORKS``."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in _networks(tuple(settings.ESCOBA_METRICS_NETWORKS)))
