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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--sets", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()
