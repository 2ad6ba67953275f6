"""Taking the luck of the deal out of a result with a baseline: control variates. Pure.

Rated sets are dealt afresh, game by game (``games.scheduling``), so the cards no longer cancel
out within a set as they did on duplicate deals. What a deal gives each seat is measured instead
by a baseline (Davidson, Archibald & Bowling 2013, "Baseline: Practical Control Variates for
Agent Evaluation in Zero-Sum Domains"): the arena's own policies play the deal, all seats
(``deal_values``), and the game points each team made, less the mean over the teams, is that
deal's value for the team, one value per control (``CONTROLS``: the greedy play, the mean of
the random plays, the expert's play). The deal is independent of who plays it, so a seat's
value, less its expected value over all deals, has mean zero whoever sits there; any fixed
combination of the controls can be taken from a result without moving its expectation:

    corrected = raw - sum_k beta_k * (value_k_for_seat - expected_value_k_for_seat)

For a pair (a, b) of one set each control is the mean, over the set's games, of a's team's
value less b's (``pair_controls``), weighted by how much luck can move the pair's score
(``pair_weight``, from the ratings before the set). A value is odd (it changes sign with the
seat); how swingy a deal is, its values squared (``deal_swings``), is even and does not cancel
within a set, but less its mean over all deals (``swing_means``, frozen) it has mean zero too:
each is an even term (``pair_even_terms``), weighted by the pair's expected edge
(``edge_weight``). a's corrected set score is its score less the coefficients of the pair's
band (``pair_band``: close and lopsided pairs) times the controls and even terms
(``corrected_score``). Every bot of a set plays every seat once, so the expected
values cancel within the set: the controls need no estimate of them (``seat_means`` may still
be given).

Any coefficients keep the score unbiased; the ones that remove most variance are the least
squares ones, Cov(controls)^-1 Cov(controls, score), fitted per band on past sets
(``beta_fit``) and frozen for a pool and a period, so a set's own result never chooses them.
The variance left is (1 - R^2) of the raw one. ``beta_fit`` sums with ``math.fsum`` (correctly
rounded) and solves its small system itself, so the same sets in any order give the same
coefficients to the last bit.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from games.engine import Card, Game, Move, Ruleset
from games.expert import expert_totals

# Corrections are stored as whole millionths of a set, so sums of them are exact in any order.
CORRECTION_UNIT = 1_000_000
# The baseline's policies: one game of greedy play (``greedy_totals``: the biggest capture now,
# else the least useful card trailed), games of uniformly random legal moves
# (``Game.play_random``: in the compiled build the whole game is C) and one game of the SDK's
# expert (``games.expert.expert_totals``, on the engine's own state), every seat the same
# policy, each its own control. benchmarks/luck.py chose them for the variance removed per CPU
# second: see docs/ratings.md.
POLICY = "greedy,random,expert"
# The controls, in the order of every vector of values, controls and coefficients.
CONTROLS = ("greedy", "random", "expert")
# The controls that also enter squared, as even terms (``deal_swings``): how swingy the deal is.
EVEN = ("greedy", "random", "expert")
# Coefficients per band: one per control, then one per even term.
TERMS = len(CONTROLS) + len(EVEN)
# Random plays per deal, beside the one greedy and the one expert play.
DEFAULT_PLAYS = 16
# Sets fewer than this in a band and its coefficients are not fitted: DEFAULT_BETAS are used.
MIN_SAMPLES = 200
# The bands of pairs by the score the stronger is expected to make (``pair_band``): below the
# first edge band 0, and so on.
BAND_EDGES = (0.9,)
# The coefficients per band used before a pool has MIN_SAMPLES corrected sets in the band:
# measured on classic/2p (benchmarks/luck.py) for sets scored by game points
# (``games.ratings.sets.fresh_set_pair_scores``), in score per game point of weighted control.
DEFAULT_BETAS = (
    (0.0207, 0.0112, 0.0199, -0.0020, -0.0046, -0.0039),
    (0.0099, 0.0454, 0.0089, 0.0, -0.0023, -0.0004),
)


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


def _mean_centred(rows: Sequence[Sequence[int]], teams: int) -> list[float]:
    """Per team, the mean over ``rows`` (plays' totals) of its points less the play's mean."""
    centred = [_centred(row) for row in rows]
    return [math.fsum(row[team] for row in centred) / len(rows) for team in range(teams)]


def deal_controls(
    greedy: Sequence[int], randoms: Sequence[Sequence[int]], expert: Sequence[int] | None = None
) -> tuple[tuple[float, ...], ...]:
    """Per team, its value of the deal under each of ``CONTROLS``, from the baseline's plays:
    ``greedy`` the greedy play's totals, ``randoms`` the random plays' and ``expert`` the
    expert's self-play (a third control when given). Each value is the game points the team
    made less the play's mean over the teams (averaged over the random plays), so each control
    sums to zero over the teams."""
    teams = len(greedy)
    columns = [_centred(greedy), _mean_centred(randoms, teams)]
    if expert is not None:
        columns.append(_centred(expert))
    return tuple(tuple(column[team] for column in columns) for team in range(teams))


def deal_values(
    ruleset: Ruleset, seed: int, plays: int = DEFAULT_PLAYS
) -> tuple[tuple[float, ...], ...]:
    """What deal ``seed`` gives each team, per control (``deal_controls``): one greedy play,
    ``plays`` random plays and one expert play. The same deal always gets the same values."""
    if plays < 1:
        raise ValueError("plays must be at least 1")
    return deal_controls(
        greedy_totals(ruleset, seed),
        random_totals(ruleset, seed, plays),
        expert_totals(ruleset, seed),
    )


def deal_swings(values: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """How swingy a deal is, per name of ``EVEN``: the mean over the teams of the team's value
    squared (``values`` as ``deal_values`` gives them). The same whoever sits where, so unlike
    a value it does not cancel within a set: a swingy deal moves the odds between a stronger
    and a weaker bot (measured: it favours the weaker). Less its mean over all deals
    (``swing_means``) it has mean zero."""
    columns = [CONTROLS.index(name) for name in EVEN]
    return tuple(math.fsum(team[k] ** 2 for team in values) / len(values) for k in columns)


def swing_means(deals: Sequence[Sequence[Sequence[float]]]) -> tuple[float, ...]:
    """The mean of ``deal_swings`` over ``deals`` (each as ``deal_values`` gives it), what an
    even term is less of. A deal's swing depends on the rules and the number of random plays
    only, never on who plays it, so its mean over rated deals already valued (random deals) is
    its mean over all deals, up to the sample's small miss; it is frozen with a pool's
    coefficients."""
    if not deals:
        raise ValueError("no deals to take a mean over")
    swings = [deal_swings(values) for values in deals]
    return tuple(math.fsum(found[k] for found in swings) / len(swings) for k in range(len(EVEN)))


@dataclass(frozen=True)
class DealGame:
    """One game of a set as the correction sees it: who played on which team (``participants``,
    (player, team) as ``games.ratings.sets.GameFacts`` has them) and the deal's controls for
    each team (``deal_values``: per team, one value per name of ``CONTROLS``)."""

    participants: tuple[tuple[int, int], ...]
    values: tuple[tuple[float, ...], ...]


def pair_controls(
    games: Sequence[DealGame], seat_means: Sequence[Sequence[float]] | None = None
) -> dict[tuple[int, int], tuple[float, ...]]:
    """(a, b) with a < b → the pair's controls over one set: per control, the mean over its
    games of a's team's value less b's, each less its team's expected value (``seat_means``,
    per team and control, zero when not given: a set that puts every player in every seat
    cancels them)."""
    sums: dict[tuple[int, int], list[list[float]]] = {}
    for game in games:
        width = len(game.values[0])
        means = seat_means or [(0.0,) * width] * len(game.values)
        value = {
            p: [v - m for v, m in zip(game.values[t], means[t], strict=True)]
            for p, t in game.participants
        }
        for a, b in itertools.combinations(sorted(value), 2):
            rows = sums.setdefault((a, b), [[] for _ in range(width)])
            for k in range(width):
                rows[k].append(value[a][k] - value[b][k])
    return {
        pair: tuple(math.fsum(found) / len(games) for found in rows) for pair, rows in sums.items()
    }


def pair_even_terms(
    games: Sequence[DealGame], means: Sequence[float]
) -> dict[tuple[int, int], tuple[float, ...]]:
    """(a, b) with a < b → the pair's even terms over one set: per name of ``EVEN``, the mean
    over its games of the deal's swing less its frozen mean (``means``, ``swing_means``), in the
    games where a and b sit on different teams (0 where they are partners: a seating fixed
    before the deal, so the term keeps mean zero)."""
    sums: dict[tuple[int, int], list[list[float]]] = {}
    for game in games:
        swing = [v - m for v, m in zip(deal_swings(game.values), means, strict=True)]
        team = dict(game.participants)
        for a, b in itertools.combinations(sorted(team), 2):
            rows = sums.setdefault((a, b), [[] for _ in swing])
            for k, value in enumerate(swing):
                rows[k].append(value if team[a] != team[b] else 0.0)
    return {
        pair: tuple(math.fsum(found) / len(games) for found in rows) for pair, rows in sums.items()
    }


def pair_weight(expected: float) -> float:
    """How much of a deal's luck reaches a pair's score, 4 p (1 - p) for a pair expected to
    score p: a deal moves the odds (the logit) alike, and the score by p (1 - p) times that, so
    a lopsided pair's score hardly moves with the cards. 1 for an even pair. ``expected`` must
    come from results before the set (the ratings published when it is corrected), never from
    its own deals, so the weighted control keeps mean zero."""
    return 4.0 * expected * (1.0 - expected)


def edge_weight(expected: float) -> float:
    """The direction and size of a pair's expected edge, 2 p - 1 for a pair expected to score
    p: what an even term (how swingy a deal is, the same whoever holds which seat) is weighted
    by. A swingy deal helps one side of a pair of unequal bots (the weaker, measured), so the
    term's sign follows the edge; which bot is stronger comes from the ratings before the set,
    never from its own result, so the weighted term keeps mean zero."""
    return 2.0 * expected - 1.0


def pair_band(expected: float) -> int:
    """Which coefficients correct a pair expected to score ``expected`` (either way round):
    0 for a close pair, up to ``len(BAND_EDGES)`` for the most lopsided. Close and lopsided
    pairs lose to different luck (a close pair to the better cards, a strong bot to the rare
    deal a weak one can win), so each band has a coefficient vector of its own. Like the
    weight, it comes from results before the set, so any frozen coefficients keep the
    correction unbiased."""
    edge = max(expected, 1.0 - expected)
    return sum(edge >= bound for bound in BAND_EDGES)


def score_correction(controls: Sequence[float], betas: Sequence[float]) -> float:
    """What the correction adds to a pair's set score: ``-sum(beta_k * control_k)``."""
    return -math.fsum(b * c for b, c in zip(betas, controls, strict=True))


def corrected_score(raw: float, controls: Sequence[float], betas: Sequence[float]) -> float:
    """A pair's corrected set score: ``raw - sum(beta_k * control_k)`` (see the module
    docstring). It can leave [0, 1] for one set; a pool's sums are kept in range by
    ``corrected_sum``."""
    return raw + score_correction(controls, betas)


def corrected_sum(score: float, count: float) -> float:
    """A pair's summed score, corrected, kept within [0, count] for the fit (a pair far from
    even over very few sets could otherwise step outside it)."""
    return min(max(score, 0.0), count)


@dataclass(frozen=True)
class BetaFit:
    """Fitted coefficients: ``betas`` (one per control), the sets they were fitted on, and the
    share of the raw score's variance the correction removes on them (R squared)."""

    betas: tuple[float, ...]
    samples: int
    variance_removed: float


def _solve(matrix: list[list[float]], right: list[float]) -> list[float] | None:
    """``matrix`` x = ``right`` by Gaussian elimination with partial pivoting (a few controls:
    no library needed, and the same sums always give the same answer to the last bit); None
    when the matrix is singular (a control that never varies or repeats another)."""
    size = len(right)
    rows = [[*matrix[i], right[i]] for i in range(size)]
    scale = max((abs(x) for row in matrix for x in row), default=0.0)
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        if abs(rows[pivot][column]) <= 1e-12 * scale:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(column + 1, size):
            factor = rows[r][column] / rows[column][column]
            for c in range(column, size + 1):
                rows[r][c] -= factor * rows[column][c]
    found = [0.0] * size
    for r in range(size - 1, -1, -1):
        tail = math.fsum(rows[r][c] * found[c] for c in range(r + 1, size))
        found[r] = (rows[r][size] - tail) / rows[r][r]
    return found


def beta_fit(samples: Iterable[tuple[float, Sequence[float]]], default: Sequence[float]) -> BetaFit:
    """The least-squares coefficients of the score on the controls over (score, controls)
    samples (with an intercept): Cov(controls)^-1 Cov(controls, score), the vector that removes
    most variance. ``default`` when there are fewer than ``MIN_SAMPLES`` or the controls are
    degenerate. Independent of order: every sum is ``math.fsum`` (correctly rounded)."""
    rows = [(s, tuple(c)) for s, c in samples]
    n = len(rows)
    fallback = BetaFit(tuple(default), n, 0.0)
    if n < MIN_SAMPLES:
        return fallback
    width = len(default)
    mean_s = math.fsum(s for s, _ in rows) / n
    means = [math.fsum(c[k] for _, c in rows) / n for k in range(width)]
    centred = [(s - mean_s, [c[k] - means[k] for k in range(width)]) for s, c in rows]
    cov = [[math.fsum(c[i] * c[j] for _, c in centred) for j in range(width)] for i in range(width)]
    cross = [math.fsum(s * c[k] for s, c in centred) for k in range(width)]
    betas = _solve(cov, cross)
    if betas is None:
        return fallback
    var_s = math.fsum(s * s for s, _ in centred)
    explained = math.fsum(b * x for b, x in zip(betas, cross, strict=True))
    removed = min(max(explained / var_s, 0.0), 1.0) if var_s > 0 else 0.0
    return BetaFit(tuple(betas), n, removed)
