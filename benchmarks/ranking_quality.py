"""Ranking quality: how many games each way of rating needs to find bots' known order.

Run from the repository root:

    .venv/bin/python -m benchmarks.ranking_quality methods [--sets 150] [--leagues 400]
    .venv/bin/python -m benchmarks.ranking_quality deals [--deals 300] [--leagues 2000]
    .venv/bin/python -m benchmarks.ranking_quality luck [--deals 2000] [--pool-deals 60]
    .venv/bin/python -m benchmarks.ranking_quality luck --chance-deals 1500

The bots of known order and the tau of a ranking are ``benchmarks.known_order``'s; ``luck``,
fresh deals with the baseline correction against duplicate deals, is ``benchmarks.luck``
(``--chance-deals``: the chance-event corrections of ``benchmarks.luck_chance``).

``methods`` (the evidence for the published rating, see docs/ratings.md). Eight bots of known
order: the SDK's expert bot playing a random legal move with probability epsilon = 0, 0.15, 0.3,
0.45, 0.6, 0.75, 0.9 and 1.0 (1.0 is a random bot), so a smaller epsilon is a stronger bot. Every
pair plays ``--sets`` duplicate sets of two two-player classic games (the same deal seed, seats
swapped), in-process (``bots_sdk.local.play_game``: the arena's own move requests, no HTTP). The
games are kept in ``--cache`` (JSON lines), so a second run only plays the sets it lacks.

Leagues of G games per pair are then drawn from those sets (with replacement, in random order, the
two games of a set one after the other, as a round robin of duplicate sets plays them), and the
very same games are rated five ways:

- ``online Elo``: today's rating, K = 32, one update per game (the baseline, kept here only);
- ``fit per game``: the Bradley-Terry fit of ``games.ratings.fit``, each game one result;
- ``fit per set: games``: the fit, each set one result, its score the share of games won;
- ``fit per set: games, then points``: the published fit, each set scored as the arena scores a
  duplicate set (``games.ratings.sets.set_pair_scores``: the share of games won, a split set
  leaning a quarter to the side with more game points; rated sets, dealt afresh, are scored by
  game points instead: ``luck`` measures that);
- ``fit per set: games, else points``: a split set decided outright by the game points.

For each way and each G the share of leagues whose ratings have Kendall's tau >= 0.9 with the true
order, and the share that put all eight bots in the true order, are counted; the answer is the
smallest G where each share reaches 95 %.

``deals`` is the earlier comparison of duplicate deals with independent deals (random < greedy <
expert separated by a sign test), kept as it was.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks import luck as luck_benchmark
from benchmarks.known_order import (
    BOTS,
    BUDGETS,
    CONFIDENCE,
    EPSILONS,
    METHOD_BUDGETS,
    TAU_GOAL,
    fit_order,
    kendall_tau,
    noisy_expert,
)
from bots_sdk.local import play_game

# -- methods: eight bots of known order, four ways of rating the same games ----------------------
CACHE = Path("artifacts/ranking_quality_sets.jsonl")
ONLINE_K = 32.0


def set_seed(first: int, second: int, number: int) -> int:
    """A seed of its own for every set of every pair, stable across runs."""
    return (first * 1_000 + second) * 100_000 + number


def play_set(job: tuple[int, int, int]) -> dict:
    """One duplicate set between bots ``first`` and ``second`` (indexes into ``EPSILONS``)."""
    first, second, number = job
    bots = {i: noisy_expert(EPSILONS[i]) for i in (first, second)}
    seed = set_seed(first, second, number)
    games = []
    for k, seating in enumerate(((first, second), (second, first))):
        result = play_game([bots[i] for i in seating], seed=seed, game_id=f"{seed}-{k}")
        games.append({"seating": list(seating), "winner": result.winner, "totals": result.totals})
    return {"pair": [first, second], "set": number, "seed": seed, "games": games}


def load_sets(cache: Path) -> dict[tuple[int, int], list[dict]]:
    sets: dict[tuple[int, int], dict[int, dict]] = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                sets.setdefault(tuple(item["pair"]), {})[item["set"]] = item
    return {pair: [found[n] for n in sorted(found)] for pair, found in sets.items()}


def play_missing(cache: Path, per_pair: int, processes: int) -> None:
    """Play the sets the cache lacks, appending each as it finishes (an interrupted run keeps
    what it played)."""
    have = load_sets(cache)
    pairs = list(itertools.combinations(range(len(EPSILONS)), 2))
    jobs = [(a, b, n) for n in range(per_pair) for a, b in pairs if n >= len(have.get((a, b), []))]
    if not jobs:
        return
    cache.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with ProcessPoolExecutor(processes) as pool, cache.open("a") as out:
        for done, item in enumerate(pool.map(play_set, jobs, chunksize=4), start=1):
            out.write(json.dumps(item) + "\n")
            out.flush()
            if done % 200 == 0:
                rate = done / (time.perf_counter() - started)
                print(f"  {done}/{len(jobs)} sets, {rate:.1f} sets/s", flush=True)
    elapsed = time.perf_counter() - started
    print(f"played {len(jobs)} sets ({2 * len(jobs)} games) in {elapsed:.0f} s")


def online_elo(games: Sequence[tuple[int, int, float]], players: int) -> list[float]:
    """Today's rating: 1500 each, K = 32, one update per game in the order played.

    ``games`` holds (first, second, first's score) with 1 a win, 1/2 a draw, 0 a loss.
    """
    ratings = [1500.0] * players
    for a, b, score in games:
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[b] - ratings[a]) / 400.0))
        delta = ONLINE_K * (score - expected)
        ratings[a] += delta
        ratings[b] -= delta
    return ratings


def game_score(game: dict, seat: int) -> float:
    winner = game["winner"]
    return 0.5 if winner is None else 1.0 if winner == seat else 0.0


def set_scores(item: dict) -> dict[str, float]:
    """The set's score for its pair's first bot, under each way of scoring a set."""
    from games.ratings.sets import GameFacts, set_pair_scores

    a, _ = item["pair"]
    won = points = 0.0
    facts = []
    for game in item["games"]:
        seat = game["seating"].index(a)
        won += game_score(game, seat)
        points += game["totals"][seat] - game["totals"][1 - seat]
        first, second = game["seating"]
        facts.append(
            GameFacts(((first, 0), (second, 1)), game["winner"], tuple(game["totals"]), None)
        )
    share = won / len(item["games"])
    ((first, _, published),) = set_pair_scores(facts)  # the arena's own scoring
    if first != a:
        published = 1 - published
    decided = 0.5 if points == 0 else 1.0 if points > 0 else 0.0
    return {
        "games": share,
        "games, then points": published,
        "games, else points": share if share != 0.5 else decided,
    }


SET_METHODS = ("games", "games, then points", "games, else points")
METHODS = ("online Elo", "fit per game", *(f"fit per set: {m}" for m in SET_METHODS))
PUBLISHED = "fit per set: games, then points"


@dataclass
class PairSets:
    """One pair's played sets as arrays: per set, its two games and its scores."""

    pair: tuple[int, int]
    firsts: np.ndarray  # (sets, 2): the bot in seat 0 of each game
    seconds: np.ndarray
    scores: np.ndarray  # (sets, 2): seat 0's score in each game
    set_scores: dict[str, np.ndarray]  # per way of scoring: the pair's first bot's score


def prepare(sets: dict[tuple[int, int], list[dict]]) -> list[PairSets]:
    prepared = []
    for pair in sorted(sets):
        found = sets[pair]
        seatings = np.array([[g["seating"] for g in item["games"]] for item in found])
        scores = np.array([[game_score(g, 0) for g in item["games"]] for item in found])
        by_way = [set_scores(item) for item in found]
        prepared.append(
            PairSets(
                pair=pair,
                firsts=seatings[:, :, 0],
                seconds=seatings[:, :, 1],
                scores=scores,
                set_scores={m: np.array([w[m] for w in by_way]) for m in SET_METHODS},
            )
        )
    return prepared


def rate_league(
    pairs: list[PairSets], games: int, rng: np.random.Generator, players: int
) -> dict[str, list[float]]:
    """One league of ``games`` games per pair drawn from ``pairs``, rated every way."""
    units = games // 2
    picks = [rng.integers(0, len(p.scores), units) for p in pairs]
    order = rng.permutation(len(pairs) * units)  # the sets in the order they are played
    firsts = np.concatenate([p.firsts[k] for p, k in zip(pairs, picks, strict=True)])[order]
    seconds = np.concatenate([p.seconds[k] for p, k in zip(pairs, picks, strict=True)])[order]
    scores = np.concatenate([p.scores[k] for p, k in zip(pairs, picks, strict=True)])[order]
    played = list(
        zip(firsts.ravel().tolist(), seconds.ravel().tolist(), scores.ravel().tolist(), strict=True)
    )
    rated = {
        "online Elo": online_elo(played, players),
        "fit per game": fit_order(firsts.ravel(), seconds.ravel(), scores.ravel(), players),
    }
    set_a = np.concatenate([np.full(units, p.pair[0]) for p in pairs])
    set_b = np.concatenate([np.full(units, p.pair[1]) for p in pairs])
    for way in SET_METHODS:
        set_score = np.concatenate(
            [p.set_scores[way][k] for p, k in zip(pairs, picks, strict=True)]
        )
        rated[f"fit per set: {way}"] = fit_order(set_a, set_b, set_score, players)
    return rated


def league_scores(
    args: tuple[list[PairSets], int, int, int],
) -> dict[str, list[tuple[float, bool]]]:
    """(tau, true order?) of each method over ``leagues`` leagues of ``games`` games per pair."""
    pairs, games, leagues, seed = args
    rng = np.random.default_rng(seed)
    players = len(EPSILONS)
    outcome: dict[str, list[tuple[float, bool]]] = {m: [] for m in METHODS}
    for _ in range(leagues):
        for method, values in rate_league(pairs, games, rng, players).items():
            tau = kendall_tau(list(values))
            outcome[method].append((tau, tau == 1.0))
    return outcome


def methods(args: argparse.Namespace) -> None:
    play_missing(args.cache, args.sets, args.processes)
    sets = {pair: found[: args.sets] for pair, found in load_sets(args.cache).items()}
    print(f"{sum(len(v) for v in sets.values())} sets ({args.sets} per pair) from {args.cache}")
    print("mean score of the stronger bot of each neighbouring pair, per game / per set:")
    pairs = prepare(sets)
    for i in range(len(EPSILONS) - 1):
        found = sets[(i, i + 1)]
        mean = sum(
            game_score(g, g["seating"].index(i)) for item in found for g in item["games"]
        ) / (2 * len(found))
        published = next(p for p in pairs if p.pair == (i, i + 1)).set_scores
        per_set = ", ".join(f"{way} {published[way].mean():.3f}" for way in SET_METHODS)
        print(f"  eps {EPSILONS[i]:.2f} over {EPSILONS[i + 1]:.2f}: {mean:.3f} / {per_set}")

    needed: dict[str, dict[str, int | None]] = {m: {"tau": None, "order": None} for m in METHODS}
    print(f"\nshare of {args.leagues} leagues with tau >= {TAU_GOAL} / in the true order:")
    print("games/pair  " + "  ".join(f"{m[-20:]:>20}" for m in METHODS))
    started = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        for games in METHOD_BUDGETS:
            if games > args.max_games:
                break
            chunks = max(1, args.processes)
            jobs = [(pairs, games, args.leagues // chunks, 7919 * games + c) for c in range(chunks)]
            outcome: dict[str, list[tuple[float, bool]]] = {m: [] for m in METHODS}
            for part in pool.map(league_scores, jobs):
                for method, rows in part.items():
                    outcome[method].extend(rows)
            cells = []
            for method in METHODS:
                rows = outcome[method]
                tau_share = sum(tau >= TAU_GOAL for tau, _ in rows) / len(rows)
                order_share = sum(order for _, order in rows) / len(rows)
                cells.append(f"{tau_share:9.0%} / {order_share:6.0%}")
                if needed[method]["tau"] is None and tau_share >= CONFIDENCE:
                    needed[method]["tau"] = games
                if needed[method]["order"] is None and order_share >= CONFIDENCE:
                    needed[method]["order"] = games
            print(f"{games:10}  " + "  ".join(f"{c:>20}" for c in cells), flush=True)
            if all(n["order"] is not None for n in needed.values()):
                break
    print(f"({time.perf_counter() - started:.0f} s of rating)")
    print(f"\ngames per pair needed for {CONFIDENCE:.0%} of leagues (published: {PUBLISHED}):")
    print(f"{'method':34}  {'tau >= 0.9':>12}  {'true order':>12}")
    for method in METHODS:
        cells = [
            str(needed[method][goal]) if needed[method][goal] else f"> {args.max_games}"
            for goal in ("tau", "order")
        ]
        print(f"{method:34}  {cells[0]:>12}  {cells[1]:>12}")
    base = needed["online Elo"]
    for goal in ("tau", "order"):
        if base[goal] and needed[PUBLISHED][goal]:
            ratio = needed[PUBLISHED][goal] / base[goal]
            print(f"published / online Elo ({goal}): {ratio:.2f}")


# -- deals: duplicate against independent deals (the earlier benchmark) --------------------------
PAIRS = [("random", "greedy"), ("greedy", "expert")]
DESIGNS = ("duplicate", "independent")


def score(result, seat: int) -> float:
    """The bot in ``seat``'s score: 1 a win, 1/2 a draw (two-player games: team = seat)."""
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner == seat else 0.0


def play_unit(args: tuple[str, str, str, int]) -> float:
    """``strong``'s mean score over one unit of two games, seats swapped."""
    weak, strong, design, unit = args
    if design == "duplicate":
        seeds = (unit, unit)
    else:
        seeds = (1_000_000 + 2 * unit, 1_000_000 + 2 * unit + 1)
    first = play_game([BOTS[strong], BOTS[weak]], seed=seeds[0])
    second = play_game([BOTS[weak], BOTS[strong]], seed=seeds[1])
    return (score(first, 0) + score(second, 1)) / 2


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: how likely so lopsided a split is between equal bots."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def separated(units: list[float]) -> bool:
    wins = sum(1 for u in units if u > 0.5)
    losses = sum(1 for u in units if u < 0.5)
    return wins > losses and sign_test_p(wins, losses) < 1 - CONFIDENCE


def league_power(pools: list[list[float]], games: int, leagues: int, rng: random.Random) -> float:
    """Share of random leagues with ``games`` games per pair that separate every pair."""
    units = games // 2
    hits = 0
    for _ in range(leagues):
        hits += all(separated(rng.choices(pool, k=units)) for pool in pools)
    return hits / leagues


def deals(args: argparse.Namespace) -> None:
    jobs = [
        (weak, strong, design, unit)
        for design in DESIGNS
        for weak, strong in PAIRS
        for unit in range(args.deals)
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        results = list(pool.map(play_unit, jobs, chunksize=10))
    elapsed = time.perf_counter() - started
    print(f"{2 * len(jobs)} games in {elapsed:.0f} s on {args.processes} processes")

    units: dict[tuple[str, tuple[str, str]], list[float]] = {}
    for (weak, strong, design, _), value in zip(jobs, results, strict=True):
        units.setdefault((design, (weak, strong)), []).append(value)

    for design in DESIGNS:
        for pair in PAIRS:
            pool_units = units[(design, pair)]
            mean = sum(pool_units) / len(pool_units)
            decided = [u for u in pool_units if u != 0.5]
            print(
                f"{design:12} {pair[1]} over {pair[0]}: mean score {mean:.3f}, "
                f"units decided {len(decided)}/{len(pool_units)}"
            )

    rng = random.Random(2026)
    print(f"\nleagues separating random < greedy < expert at {CONFIDENCE:.0%} (sign test):")
    print("games/pair  " + "  ".join(f"{d:>11}" for d in DESIGNS))
    needed: dict[str, int | None] = dict.fromkeys(DESIGNS)
    for games in BUDGETS:
        powers = {
            d: league_power([units[(d, p)] for p in PAIRS], games, args.leagues, rng)
            for d in DESIGNS
        }
        print(f"{games:10}  " + "  ".join(f"{powers[d]:11.0%}" for d in DESIGNS))
        for design, power in powers.items():
            if needed[design] is None and power >= CONFIDENCE:
                needed[design] = games
        if all(needed.values()):
            break
    for design in DESIGNS:
        games = needed[design]
        text = f"{games} games per pair ({3 * games} in the league)" if games else "more than tried"
        print(f"{design}: {text}")
    if all(needed.values()):
        print(f"independent / duplicate: {needed['independent'] / needed['duplicate']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    commands = parser.add_subparsers(dest="command", required=True)
    ways = commands.add_parser("methods", help="Four ways of rating the same games.")
    ways.add_argument("--sets", type=int, default=150, help="Duplicate sets played per pair.")
    ways.add_argument("--leagues", type=int, default=400, help="Random leagues per budget.")
    ways.add_argument("--max-games", type=int, default=1600, help="Largest games per pair tried.")
    ways.add_argument("--cache", type=Path, default=CACHE, help="Where the played sets are kept.")
    ways.add_argument("--play-only", action="store_true", help="Play the sets, rate nothing.")
    designs = commands.add_parser("deals", help="Duplicate against independent deals.")
    designs.add_argument("--deals", type=int, default=300, help="Units (2 games) per pair/design.")
    designs.add_argument("--leagues", type=int, default=2000, help="Random leagues per budget.")
    fresh = commands.add_parser("luck", help="Fresh deals with the baseline correction.")
    luck_benchmark.add_arguments(fresh)
    args = parser.parse_args()
    if args.command == "deals":
        deals(args)
    elif args.command == "luck":
        luck_benchmark.luck(args)
    elif args.play_only:
        play_missing(args.cache, args.sets, args.processes)
    else:
        methods(args)


if __name__ == "__main__":
    main()
