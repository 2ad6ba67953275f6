"""Fit speed: a pool of 1,000 bots and 1,000,000 rated sets refitted on one core.

Run from the repository root:

    .venv/bin/python -m benchmarks.rating_fit [--bots 1000] [--sets 1000000] [--repeat 3]

The sets are drawn at random: each bot has a true rating (normal, mean 1500, sd 200), each set
pairs two bots (the second is drawn near the first, as a ladder pairs them, with a uniform draw
one time in five), and its score is 1, 1/2 or 0 with the Elo probabilities. Timed separately, best
of ``--repeat``:

- ``sum``: summing the sets per pair (what the fit's SQL ``GROUP BY`` does in the service), here
  with numpy from the raw arrays;
- ``fit``: ``games.ratings.fit.fit_table`` (Newton iterations, covariance, components) on
  those sums, and ``los``: the likelihood of superiority of every bot over the next one down.

BLAS is held to one thread (``OPENBLAS_NUM_THREADS=1`` and the like, set before numpy loads), so
the figures are for one core. The goal: the whole refit in at most 5 s.

With ``--database`` the same sets are written to the database of ``DATABASE_URL`` (PostgreSQL:
one finished match, ``RatedSet``, its two players and its ``SetScore`` each, in pool
``bench-<bots>-<sets>/2p``, kept for the next run) and the service's own refit is timed, best
of ``--repeat``, reading the pool both ways in the same run: ``from sets`` sums every
``SetScore`` with a ``GROUP BY`` (how every fit read before the running totals;
``ratings_recompute`` still does), ``from totals`` reads the ``PairTotal``/``VersionTotal``
rows (what a fit does now). Both must publish the same figures to the cent. CPU time is this
process's plus its database backend's (read from ``/proc``: the database must run on this
machine), with PostgreSQL's parallel workers turned off, so it is one core's work; wall clock
also counts the waits for a core.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from games.ratings.fit import PairTable, fit_table  # noqa: E402


def simulate(
    bots: int, sets: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(true ratings, first bot, second bot, first's score) of ``sets`` random sets."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(1500, 200, bots)
    order = np.argsort(-truth)
    drawn = sets + sets // 10  # a few more: a bot drawn against itself is dropped
    place = rng.integers(0, bots, drawn)
    near = np.clip(place + rng.integers(-20, 21, drawn), 0, bots - 1)
    anywhere = rng.integers(0, bots, drawn)
    other = np.where(rng.random(drawn) < 0.2, anywhere, near)
    a, b = order[place], order[other]
    keep = a != b
    a, b = a[keep], b[keep]
    expected = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    # some draws, taken evenly from both sides so that the expected score stays the Elo one
    draw = 0.2 * np.minimum(expected, 1 - expected)
    roll = rng.random(a.size)
    score = np.where(roll < expected - draw / 2, 1.0, np.where(roll < expected + draw / 2, 0.5, 0))
    return truth, a[:sets], b[:sets], score[:sets]


def pair_sums(a: np.ndarray, b: np.ndarray, score: np.ndarray, bots: int) -> PairTable:
    """Sum the sets per pair (first < second), as the service's GROUP BY does."""
    first, second = np.minimum(a, b), np.maximum(a, b)
    mine = np.where(a < b, score, 1 - score)
    keys, index = np.unique(first * bots + second, return_inverse=True)
    count = np.bincount(index, minlength=keys.size).astype(float)
    total = np.bincount(index, mine, minlength=keys.size)
    return PairTable(
        players=np.arange(bots, dtype=np.int64),
        first=keys // bots,
        second=keys % bots,
        count=count,
        score=total,
    )


def database_fill(pool: str, bots: int, a: np.ndarray, b: np.ndarray, score: np.ndarray) -> None:
    """Write the sets as rated sets of ``pool`` with their running totals (PostgreSQL ``COPY``;
    a pool already holding them is reused)."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from tournaments.models import Bot, BotVersion, League, RatedSet
    from tournaments.services.rating_fits import pool_totals_rebuild

    if RatedSet.objects.filter(pool=pool).count() == a.size:
        print(f"reusing the {a.size} rated sets of {pool}")
        return
    owner, _ = get_user_model().objects.get_or_create(username="bench-ratings")
    with transaction.atomic():
        league = League.objects.create(
            name="rating fit benchmark", creator=owner, ruleset={"name": "bench"},
            pool=pool, players=2, rated=True, seed=1, status=League.Status.FINISHED,
        )  # fmt: skip
        made = Bot.objects.bulk_create(
            Bot(owner=owner, name=f"{pool}-{i}", url="http://127.0.0.1:9/", secret="x")
            for i in range(bots)
        )
        versions = BotVersion.objects.bulk_create(BotVersion(bot=bot) for bot in made)
        version_id = np.array([v.id for v in versions], dtype=np.int64)
        first, second = np.minimum(a, b), np.maximum(a, b)
        # ids ascend with the bot index, so the lower index is the lower version id
        twelfths = np.rint(12 * np.where(a < b, score, 1 - score)).astype(np.int64)
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE bench_sets (number int, player bigint, opponent bigint, "
                "twelfths int) ON COMMIT DROP"
            )
            with cursor.copy("COPY bench_sets FROM STDIN") as copy:
                for n in range(a.size):
                    copy.write_row(
                        (n + 1, version_id[first[n]], version_id[second[n]], twelfths[n])
                    )
            cursor.execute(
                "INSERT INTO tournaments_match (league_id, number, round, seed, status, attempts,"
                " worker, claim) SELECT %s, number, 1, number, 'finished', 0, '', '' "
                "FROM bench_sets ORDER BY number",
                [league.id],
            )
            cursor.execute(
                "INSERT INTO tournaments_ratedset (match_id, pool, games, created_at) "
                "SELECT id, %s, 2, now() FROM tournaments_match WHERE league_id = %s "
                "ORDER BY number",
                [pool, league.id],
            )
            joined = (
                "FROM bench_sets s JOIN tournaments_match m ON m.league_id = %s AND "
                "m.number = s.number JOIN tournaments_ratedset r ON r.match_id = m.id"
            )
            cursor.execute(
                "INSERT INTO tournaments_setscore (rated_set_id, pool, player_id, opponent_id, "
                f"twelfths) SELECT r.id, %s, s.player, s.opponent, s.twelfths {joined}",
                [pool, league.id],
            )
            for side in ("player", "opponent"):
                cursor.execute(
                    "INSERT INTO tournaments_ratedset_players (ratedset_id, botversion_id) "
                    f"SELECT r.id, s.{side} {joined}",
                    [league.id],
                )
        pool_totals_rebuild(pool=pool)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def database_timings(pool: str, repeat: int) -> None:
    """Time the service's refit of ``pool`` reading the sets and reading the totals."""
    from django.db import connection

    from tournaments.services.rating_fits import (
        pool_fit_compute,
        pool_fit_publish,
        pool_totals,
        pool_totals_from_sets,
    )

    with connection.cursor() as cursor:
        # one core: no parallel workers for the database's part either
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    def cpu() -> float:
        """CPU seconds of this process and of its database backend (same machine, /proc)."""
        with open(f"/proc/{backend}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return time.process_time() + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    timings: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}

    def timed(name: str, work):
        start, used = time.perf_counter(), cpu()
        result = work()
        timings.setdefault(name, []).append(time.perf_counter() - start)
        cpus.setdefault(name, []).append(cpu() - used)
        return result

    for _ in range(repeat):  # interleaved, so both see the same load
        timed("read from sets", lambda: pool_totals_from_sets(pool=pool))
        timed("read from totals", lambda: pool_totals(pool=pool))
        old = timed("refit from sets", lambda: pool_fit_compute(pool=pool, from_sets=True))
        new = timed("refit from totals", lambda: pool_fit_compute(pool=pool))
        same = [e.published() for e in old.entries] == [e.published() for e in new.entries]
        assert same, "the two reads gave different fits"
    timed("publish", lambda: pool_fit_publish(result=new))
    pairs, _ = pool_totals(pool=pool)
    print(f"database: {new.sets} rated sets, {len(pairs)} pair totals; same fit to the cent")
    print(f"best of {repeat}, database included:  CPU time (one core)   wall clock (all runs)")
    for name, values in timings.items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name:18} {min(cpus[name]):6.2f} s   {min(values):6.2f} s ({runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--sets", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--database", action="store_true", help="Also time the service's refit on DATABASE_URL."
    )
    args = parser.parse_args()
    print(f"uptime: {os.popen('uptime').read().strip()}")

    truth, a, b, score = simulate(args.bots, args.sets, seed=2026)
    print(f"{args.bots} bots, {a.size} sets; numpy {np.__version__}, one BLAS thread")
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _ in range(args.repeat):
        marks = [(time.perf_counter(), time.process_time())]
        table = pair_sums(a, b, score, args.bots)
        marks.append((time.perf_counter(), time.process_time()))
        fit = fit_table(table)
        marks.append((time.perf_counter(), time.process_time()))
        ranked = np.argsort(-fit.ratings)
        los = [fit.los(int(i), int(j)) for i, j in zip(ranked, ranked[1:], strict=False)]
        marks.append((time.perf_counter(), time.process_time()))
        spans = {"sum": (0, 1), "fit": (1, 2), "los": (2, 3), "total": (0, 3)}
        for name, (start, end) in spans.items():
            wall = marks[end][0] - marks[start][0]
            used = marks[end][1] - marks[start][1]
            best[name] = min(best.get(name, wall), wall)
            cpu[name] = min(cpu.get(name, used), used)
    print(f"{table.count.size} pairs met, {fit.iterations} Newton iterations")
    print(f"best of {args.repeat}:  wall clock   CPU time")
    for name in ("sum", "fit", "los", "total"):
        print(f"  {name:5}      {best[name]:6.2f} s   {cpu[name]:6.2f} s")
    correlation = np.corrcoef(fit.ratings, truth)[0, 1]
    half = 1.959964 * np.sqrt(np.diag(fit.covariance))
    inside = np.mean(np.abs(fit.ratings - (truth - truth.mean() + 1500)) <= half)
    print(
        f"correlation with the true ratings {correlation:.4f}; mean 95% half-width "
        f"{half.mean():.1f} Elo; true rating inside the interval for {inside:.1%} of bots"
    )
    print(f"LOS of the top bot over the second: {los[0]:.3f}")
    # The CPU time is what one core spends, whatever else the machine runs; the wall clock
    # also counts the waits for a core that a loaded machine adds.
    verdict = "within" if cpu["total"] <= 5 else "OVER"
    print(
        f"refit: {cpu['total']:.2f} s of one core ({best['total']:.2f} s wall clock here): "
        f"{verdict} the 5 s goal"
    )
    if args.database:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        django.setup()
        pool = f"bench-{args.bots}-{a.size}/2p"
        database_fill(pool, args.bots, a, b, score)
        database_timings(pool, args.repeat)
        print(f"uptime: {os.popen('uptime').read().strip()}")


if __name__ == "__main__":
    main()
