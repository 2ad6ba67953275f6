"""Bots of known order and how a ranking of them is judged, shared by the ranking benchmarks
(``benchmarks.ranking_quality`` and ``benchmarks.luck``).

Eight bots: the SDK's expert bot playing a random legal move with probability epsilon (0 to 1.0,
1.0 being a random bot), so a smaller epsilon is a stronger bot; and the SDK's three example bots
by name. A ranking is judged by Kendall's tau against the known order, after the published fit.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from bots_sdk.examples import expert, greedy
from bots_sdk.examples import random as random_bot
from bots_sdk.state import BotState
from games.engine import Move
from games.ratings.fit import PairTable, fit_table

EPSILONS = (0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.0)
TAU_GOAL = 0.9
CONFIDENCE = 0.95
METHOD_BUDGETS = [*range(4, 40, 4), *range(40, 100, 10), *range(100, 200, 20), *range(200, 420, 40)]
METHOD_BUDGETS += [480, 560, 640, 800, 1000, 1200, 1600]

BOTS = {"random": random_bot.choose, "greedy": greedy.choose, "expert": expert.choose}
BUDGETS = [*range(2, 62, 2), 70, 80, 100, 120, 150, 200, 250]


def noisy_expert(epsilon: float) -> Callable[[BotState], Move]:
    """The expert bot, except that with probability ``epsilon`` it plays a random legal move.

    The coin is seeded from the position (as the random example bot is), so a replayed game
    replays its moves and the games of the cache can be played again exactly.
    """
    best = expert.make_expert()
    name = f"eps{epsilon:.2f}"

    def choose(state: BotState) -> Move:
        key = f"{name}|{state.game_id}|{state.round}|{state.seat}|{len(state.history)}"
        coin = random.Random(key)
        if coin.random() < epsilon:
            return coin.choice(state.legal_moves)
        return best(state)

    choose.__name__ = name
    return choose


def kendall_tau(ratings: Sequence[float]) -> float:
    """Kendall's tau between ``ratings`` (index i = bot i) and the true order (bot 0 strongest).

    A tie in the ratings counts as neither concordant nor discordant.
    """
    score = 0
    pairs = 0
    for i, j in itertools.combinations(range(len(ratings)), 2):
        pairs += 1
        if ratings[i] > ratings[j]:
            score += 1
        elif ratings[i] < ratings[j]:
            score -= 1
    return score / pairs


def fit_order(firsts, seconds, scores, players: int) -> np.ndarray:
    """The fitted ratings of results (firsts[k] scored scores[k] against seconds[k])."""
    a, b = np.minimum(firsts, seconds), np.maximum(firsts, seconds)
    mine = np.where(firsts < seconds, scores, 1 - scores)
    keys, index = np.unique(a * players + b, return_inverse=True)
    table = PairTable(
        players=np.arange(players, dtype=np.int64),
        first=keys // players,
        second=keys % players,
        count=np.bincount(index, minlength=keys.size).astype(float),
        score=np.bincount(index, mine, minlength=keys.size),
    )
    return fit_table(table).ratings


def cached_map(path: Path, jobs: list, work: Callable, key: Callable, processes: int) -> dict:
    """Run ``work`` over the ``jobs`` the JSON-lines cache at ``path`` lacks; all results by key
    (an interrupted run keeps what it finished)."""
    found = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                found[key(item)] = item
    missing = [job for job in jobs if key(job) not in found]
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(processes) as pool, path.open("a") as out:
            for item in pool.map(work, missing, chunksize=8):
                out.write(json.dumps(item) + "\n")
                out.flush()
                found[key(item)] = item
    return found
