"""Taking the luck of the deal out of a result with a baseline: a control variate. Pure.

Rated sets are dealt afresh, game by game (``games.scheduling``), so the cards no longer cancel
out within a set as they did on duplicate deals. What a deal gives each seat is measured instead
by a baseline (Davidson, Archibald & Bowling 2013, "Baseline: Practical Control Variates for
Agent Evaluation in Zero-Sum Domains"): the arena's own policy plays the deal, all seats
(``deal_values``: one greedy play and some random ones), and the game points each team made,
less the mean over the teams, is that deal's value for the team. The deal is independent of who
plays it, so a seat's value, less its expected value over all deals, has mean zero whoever sits
there; any fixed multiple of it can be taken from a result without moving its expectation:

    corrected = raw - beta * (value_for_seat - expected_value_for_seat)

For a pair (a, b) of one set the control is the mean, over the set's games, of a's team's value
less b's (``pair_controls``), weighted by how much luck can move the pair's score
(``pair_weight``, from the ratings before the set); a's corrected set score is its score less
beta times that (``corrected_score``). Every bot of a set plays every seat once, so the
expected values cancel within the set: the control needs no estimate of them (``seat_means``
may still be given).

Any beta keeps the score unbiased; the one that removes most variance is Cov(score, control) /
Var(control), fitted on past sets (``beta_fit``) and frozen for a pool and a period, so a set's
own result never chooses its coefficient. With correlation rho between score and control the
variance left is (1 - rho^2) of the raw one. ``beta_fit`` sums with ``math.fsum`` (correctly
rounded), so the same sets in any order give the same beta to the last bit.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from games.engine import Card, Game, Move, Ruleset

# Corrections are stored as whole millionths of a set, so sums of them are exact in any order.
CORRECTION_UNIT = 1_000_000
# The baseline policy: one game of greedy play (``greedy_totals``: the biggest capture now, else
# the least useful card trailed) plus uniformly random legal moves (``Game.play_random``: in the
# compiled build the whole game is C), every seat the same policy. benchmarks/ranking_quality.py
# ``luck`` chose it for the variance removed per CPU second: see docs/ratings.md.
POLICY = "greedy+random"
# Random plays per deal, beside the one greedy play.
DEFAULT_PLAYS = 16
# Sets fewer than this and a coefficient is not fitted: DEFAULT_BETA is used.
MIN_SAMPLES = 200
# The coefficient used before a pool has MIN_SAMPLES corrected sets: measured on classic/2p
# (benchmarks/ranking_quality.py baseline), in score per game point of control.
DEFAULT_BETA = 0.03


def _worth(card: Card) -> int:
    """How much a card helps a round's points: the 7 of oros, then sevens, then oros."""
    return (card.suit == "o") + 2 * (card.value == 7) + 4 * (card.suit == "o" and card.value == 7)


def greedy_move(game: Game) -> Move:
    """The greedy policy's move (the SDK's greedy example, on the engine's own state): a sweep
    first, then the capture taking most cards, then most worth; with nothing to take, the least
    useful card trailed. Deterministic: ties go to the first in ``legal_moves()``'s order."""
    moves = game.legal_moves()
    captures = [move for move in moves if move.capture]
    if captures:
        table = len(game.table)
        return max(
            captures,
            key=lambda m: (
                len(m.capture) == table,
                len(m.capture) + 1,
                _worth(m.card) + sum(_worth(c) for c in m.capture),
            ),
        )
    return min(moves, key=lambda m: (_worth(m.card), m.card.value))


def greedy_totals(ruleset: Ruleset, seed: int) -> list[int]:
    """The game points per team when the greedy policy plays every seat of deal ``seed``."""
    game = Game.new(ruleset, seed)
    while not game.is_over:
        game.apply(greedy_move(game))
    return list(game.result.totals)


def random_totals(ruleset: Ruleset, seed: int, plays: int) -> list[list[int]]:
    """The game points per team of each of ``plays`` uniformly random plays of deal ``seed``;
    play k's moves come from a generator seeded by the deal and k, so they never change."""
    found = []
    for k in range(plays):
        game = Game.new(ruleset, seed)
        game.play_random(random.Random(f"baseline/{seed}/{k}"), -1, True)
        found.append(list(game.result.totals))
    return found


def _centred(values: Sequence[float]) -> list[float]:
    centre = math.fsum(values) / len(values)
    return [value - centre for value in values]


def deal_values(ruleset: Ruleset, seed: int, plays: int = DEFAULT_PLAYS) -> tuple[float, ...]:
    """What deal ``seed`` gives each team, by the baseline policy: the game points the team made
    in the greedy play, plus the mean it made over ``plays`` random plays, each less its mean
    over the teams (so the values sum to zero). The same deal always gets the same values."""
    if plays < 1:
        raise ValueError("plays must be at least 1")
    greedy = _centred(greedy_totals(ruleset, seed))
    rows = random_totals(ruleset, seed, plays)
    means = _centred([math.fsum(row[team] for row in rows) / plays for team in range(len(greedy))])
    return tuple(g + r for g, r in zip(greedy, means, strict=True))


@dataclass(frozen=True)
class DealGame:
    """One game of a set as the correction sees it: who played on which team (``participants``,
    (player, team) as ``games.ratings.sets.GameFacts`` has them) and the deal's value for each
    team (``deal_values``)."""

    participants: tuple[tuple[int, int], ...]
    values: tuple[float, ...]


def pair_controls(
    games: Sequence[DealGame], seat_means: Sequence[float] | None = None
) -> dict[tuple[int, int], float]:
    """(a, b) with a < b → the pair's control over one set: the mean over its games of a's
    team's value less b's, each less its team's expected value (``seat_means``, zero when not
    given: a set that puts every player in every seat cancels them)."""
    sums: dict[tuple[int, int], list[float]] = {}
    for game in games:
        means = seat_means or (0.0,) * len(game.values)
        value = {p: game.values[t] - means[t] for p, t in game.participants}
        for a, b in itertools.combinations(sorted(value), 2):
            sums.setdefault((a, b), []).append(value[a] - value[b])
    return {pair: math.fsum(found) / len(games) for pair, found in sums.items()}


def pair_weight(expected: float) -> float:
    """How much of a deal's luck reaches a pair's score, 4 p (1 - p) for a pair expected to
    score p: a deal moves the odds (the logit) alike, and the score by p (1 - p) times that, so
    a lopsided pair's score hardly moves with the cards. 1 for an even pair. ``expected`` must
    come from results before the set (the ratings published when it is corrected), never from
    its own deals, so the weighted control keeps mean zero."""
    return 4.0 * expected * (1.0 - expected)


def corrected_score(raw: float, control: float, beta: float) -> float:
    """A pair's corrected set score: ``raw - beta * control`` (see the module docstring). It can
    leave [0, 1] for one set; a pool's sums are kept in range by ``corrected_sum``."""
    return raw - beta * control


def corrected_sum(score: float, count: float) -> float:
    """A pair's summed score, corrected, kept within [0, count] for the fit (a pair far from
    even over very few sets could otherwise step outside it)."""
    return min(max(score, 0.0), count)


@dataclass(frozen=True)
class BetaFit:
    """A fitted coefficient: ``beta``, the sets it was fitted on, and the share of the raw
    score's variance the correction removes on them (rho squared)."""

    beta: float
    samples: int
    variance_removed: float


def beta_fit(samples: Iterable[tuple[float, float]], default: float = DEFAULT_BETA) -> BetaFit:
    """Cov(score, control) / Var(control) over (score, control) samples, or ``default`` when
    there are fewer than ``MIN_SAMPLES`` or the control never varies. Independent of order."""
    rows = list(samples)
    n = len(rows)
    if n < MIN_SAMPLES:
        return BetaFit(default, n, 0.0)
    mean_s = math.fsum(s for s, _ in rows) / n
    mean_c = math.fsum(c for _, c in rows) / n
    cov = math.fsum((s - mean_s) * (c - mean_c) for s, c in rows)
    var_c = math.fsum((c - mean_c) ** 2 for _, c in rows)
    var_s = math.fsum((s - mean_s) ** 2 for s, _ in rows)
    if var_c <= 0.0:
        return BetaFit(default, n, 0.0)
    beta = cov / var_c
    removed = cov * cov / (var_c * var_s) if var_s > 0 else 0.0
    return BetaFit(beta, n, removed)
