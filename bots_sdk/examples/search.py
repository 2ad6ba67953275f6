"""Determinized Monte Carlo search: play the round out many times over the cards it cannot see.

For every sampled deal of the unseen cards (``games.engine.Determinizer``: the other hands and
the deck drawn uniformly from what this seat has not seen) it tries each legal move and plays
the rest of the round with a quick greedy policy for every seat, then scores the round. The
move with the best average wins. Trying every move on the same deals (common random numbers)
makes the comparison between moves much sharper than the number of deals alone would. The
expert example's one-ply score of each move counts as a few deals' worth of prior, so with little
time (a short bank, a busy machine) it plays like expert and with more time like the rollouts.

The time it takes comes from the request: a share of ``time_bank_ms`` (the time this call may
take), so it answers well inside the arena's deadline whatever the time control.
"""

from __future__ import annotations

import time
from random import Random

from games.engine import ALL_CARDS, Card, Determinizer, Game, Move

from ..state import BotState
from . import expert

__author__ = "Escoba Arena examples"

# Of the time this call may take, the share spent searching, and what is always kept back for
# parsing, the reply and the network.
BUDGET_SHARE = 0.6
RESERVE_MS = 15.0
MIN_BUDGET_MS = 5.0
# How a round's outcome is valued: its point difference, plus this much for a game it decides.
GAME_WIN = 10.0
# In rollouts, the chance that a seat plays a random legal move instead of the greedy one.
EXPLORE = 0.1
# The expert's score of a move (in its own units, about a fifth of a point each) weighs as much
# as this many deals.
PRIOR_DEALS = 6
PRIOR_SCALE = 0.2


def budget_seconds(state: BotState) -> float:
    """How long to search: a share of the call's time bank, minus a fixed reserve."""
    bank = float(min(state.time_bank_ms, state.timeout_ms or state.time_bank_ms))
    return max(MIN_BUDGET_MS, bank * BUDGET_SHARE - RESERVE_MS) / 1000.0


# -- the rollout policy ----------------------------------------------------------------------

_SEVEN_OF_OROS = Card.from_str("7o").index
_WORTH = [
    1.0 + 0.5 * (card.suit == "o") + 1.0 * (card.value == 7) + 3.0 * (card.index == _SEVEN_OF_OROS)
    for card in ALL_CARDS
]
_SWEEP = 8.0
_RISK = 3.0
_scores: dict[Move, float] = {}


def _static_score(move: Move) -> float:
    """A move's greedy value apart from sweeping: what it takes, or what trailing gives away."""
    score = _scores.get(move)
    if score is None:
        if move.capture:
            score = _WORTH[move.card.index] + sum(_WORTH[card.index] for card in move.capture)
        else:
            # Trail the card that matters least; a low card is also harder to sweep with.
            score = -_WORTH[move.card.index] - 0.05 * move.card.value
        _scores[move] = score
    return score


def rollout(game: Game, team: int, rng: Random) -> float:
    """Play ``game`` to the end of its round, every seat with the same greedy policy (what a
    move takes, sweeps first, less the risk of leaving a table worth 5 to 14, which the next
    player sweeps with one card; now and then a random move). Returns the round's value to
    ``team``: its points minus the best other side's, and ``GAME_WIN`` more when it decides the
    game. The table's size and worth are followed here rather than read back on every play."""
    before = game.totals
    number = game.round
    table = game.table
    size = len(table)
    worth = 0
    for card in table:
        worth += card.value
    scores = _scores
    while not game.is_over and game.round == number:
        moves = game.legal_moves()
        move = moves[0]
        if len(moves) > 1:
            if rng.random() < EXPLORE:
                move = moves[int(rng.random() * len(moves))]
            else:
                best_score = -1e9
                for candidate in moves:
                    score = scores.get(candidate)
                    if score is None:
                        score = _static_score(candidate)
                    value = candidate.card.value
                    if candidate.capture:
                        if len(candidate.capture) == size:
                            score += _SWEEP
                            left = 0
                        else:
                            left = worth + value - 15
                    else:
                        left = worth + value
                    if 5 <= left <= 14:
                        score -= _RISK
                    if score > best_score:
                        move, best_score = candidate, score
        game.apply(move)
        if move.capture:
            size -= len(move.capture)
            worth += move.card.value - 15
        else:
            size += 1
            worth += move.card.value
    after = game.totals
    gains = [a - b for a, b in zip(after, before, strict=True)]
    value = float(gains[team] - max(g for t, g in enumerate(gains) if t != team))
    result = game.result
    if result is not None:
        if result.winner == team:
            value += GAME_WIN
        elif result.winner is not None:
            value -= GAME_WIN
    return value


# -- the search ------------------------------------------------------------------------------


def search(
    state: BotState, deadline: float, max_deals: int | None = None
) -> tuple[Move, list[tuple[Move, int, float]]]:
    """The best move by average rollout value over sampled deals, with each move's statistics
    (move, deals, mean value): deals until ``deadline`` (``time.perf_counter``) or ``max_deals``,
    and always at least one."""
    # The request carries everything the sampler needs: hand, table, plays, lucky deal, counts.
    sampler = Determinizer(state)
    moves = list(state.legal_moves)
    prior = expert_scores(state)
    totals = [0.0] * len(moves)
    team = state.team
    rng = Random(f"{state.game_id}/{state.round}/{len(state.history)}/{state.seat}")
    deals = 0
    while True:
        world = sampler.sample(rng)
        for index, move in enumerate(moves):
            game = world.clone()
            game.apply(move)
            totals[index] += rollout(game, team, rng)
        deals += 1
        if time.perf_counter() >= deadline or deals == max_deals:
            break
    # The expert's one-ply judgement of each move counts as PRIOR_DEALS deals: with few deals
    # (a short time bank, a loaded machine) the choice is the expert's, with many the rollouts'.
    means = [
        (PRIOR_DEALS * PRIOR_SCALE * prior[index] + totals[index]) / (PRIOR_DEALS + deals)
        for index in range(len(moves))
    ]
    stats = [(move, deals, mean) for move, mean in zip(moves, means, strict=True)]
    best = max(range(len(moves)), key=lambda index: means[index])
    return moves[best], stats


def expert_scores(state: BotState) -> list[float]:
    """The expert example's score of each legal move (what it takes now, less what the next
    player can expect to take from the table it leaves)."""
    weights = expert.Weights()
    chances = expert.chance_of_value(state.unseen_cards(), expert.next_hand_size(state))
    return [expert.score_move(state, move, weights, chances) for move in state.legal_moves]


def choose(state: BotState) -> Move:
    if len(state.legal_moves) == 1:
        return state.legal_moves[0]
    deadline = time.perf_counter() + budget_seconds(state)
    move, _ = search(state, deadline)
    return move
