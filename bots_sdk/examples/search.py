"""Determinized Monte Carlo search: play the deal out many times over the cards it cannot see.

For every sampled deal of the unseen cards (``games.engine.Determinizer``: the other hands and
the deck drawn uniformly from what this seat has not seen) it tries each legal move and plays on
with a quick greedy policy for every seat. Before the round's last deal a rollout stops one play
into the next deal (that play is the next player's shot at the table this deal leaves) and is
valued by what the round is then worth (``RoundValue``): for two sides, each category's chance
of going either way from the cards, oros, sevens and sixes each side has taken so far (a side
with 15 cards of 40 taken and its rival with 10 is likelier to end with the most), plus the
seven of oros and the escobas. A capture is worth more when the category is still open and
nothing once it is decided, which fixed per-card weights cannot say. That costs a few plays, so
many deals fit in the time. In the last deal, with six cards or fewer left in the hands, each
sample is solved exactly (minimax with alpha-beta over the round's points, and the game when
the round decides it); with two players the other hand is then every unseen card, so one exact
solve is the whole answer. The move with the best average wins. Trying every move on the same
deals (common random numbers) makes the comparison between moves much sharper than the number
of deals alone would. The expert example's one-ply score of each move counts as a few deals'
worth of prior, so with little time (a busy machine) it plays like expert and with more time
like the rollouts.

The time it takes comes from the request: a share of ``time_bank_ms`` (the time this call may
take), so it answers well inside the arena's deadline whatever the time control; a bank too
short for even one deal gets the expert's move at once. The time is counted from the request's
arrival (``BotState.received_at``), not from the call of ``choose``; a request that waited so long
that too little is left also gets the expert's move. Searches of several games at once share
the process's one core (the GIL): past its deadline each waits for the others' time slices before
it can answer, so the time kept back grows with the searches in flight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from math import exp, sqrt
from random import Random
from typing import Any

from games.engine import ALL_CARDS, Card, Determinizer, Game, Move

from ..state import BotState
from . import expert

__author__ = "Escoba Arena examples"

# Of the time this call may take, the share spent searching, and what is always kept back for
# parsing, the reply and the network.
BUDGET_SHARE = 0.6
RESERVE_MS = 15.0
MIN_BUDGET_MS = 5.0
# Kept back for each other search in flight in this process: a few of its time slices
# (`sys.getswitchinterval()`, 5 ms) per step the answer still needs. Measured on the SDK server:
# with 8 searches at once and no such reserve, answers came up to 110 ms past the budget.
RESERVE_PER_OTHER_SEARCH_MS = 20.0
# How a round's outcome is valued: its point difference, plus this much for a game it decides.
GAME_WIN = 10.0
# In rollouts, the chance that a seat plays a random legal move instead of the greedy one.
EXPLORE = 0.1
# The expert's score of a move (in its own units, about a fifth of a point each) weighs as much
# as this many deals.
PRIOR_DEALS = 6
PRIOR_SCALE = 0.2
# Plays into the next deal that a rollout before the last deal also makes: the first player of
# the next deal's shot at the table this deal leaves.
LOOKAHEAD = 1
# In the last deal, the samples are solved exactly (minimax) once the hands hold this many cards
# or fewer in all; the expert's score then only breaks ties, at this weight.
SOLVE_CARDS = 6
PRIOR_TIE = 1e-6


def budget_seconds(state: BotState, others: int = 0) -> float:
    """How long to search, counted from the request's arrival: a share of the call's time
    bank, minus a reserve for answering that grows with the `others` searches running in this
    process at the same time; never below the floor."""
    bank = float(min(state.time_bank_ms, state.timeout_ms or state.time_bank_ms))
    search_ms = bank * BUDGET_SHARE - RESERVE_MS - others * RESERVE_PER_OTHER_SEARCH_MS
    return max(MIN_BUDGET_MS, search_ms) / 1000.0


_searching = 0
_searching_lock = threading.Lock()


@contextmanager
def _one_more_search() -> Iterator[int]:
    """Count this search in for its duration; yields how many others were running already."""
    global _searching
    with _searching_lock:
        others = _searching
        _searching += 1
    try:
        yield others
    finally:
        with _searching_lock:
            _searching -= 1


# -- what a side has captured, packed in one int -------------------------------------------
#
# A rollout adds up each side's captures as it goes; packing the counts that scoring needs into
# bit fields of one int makes that one addition a capture. Fields (low to high): cards (6 bits),
# oros (4), sevens (3), sixes (3), the seven of oros (2), escobas (8).
_CARDS, _OROS, _SEVENS, _SIXES, _SEVEN_OF_OROS_BIT, _ESCOBAS = 0, 6, 10, 13, 16, 18
_ESCOBA = 1 << _ESCOBAS
_SEVEN_OF_OROS = Card.from_str("7o").index


def _card_bits(card: Card) -> int:
    bits = 1 << _CARDS
    if card.suit == "o":
        bits += 1 << _OROS
    if card.value == 7:
        bits += 1 << _SEVENS
    if card.value == 6:
        bits += 1 << _SIXES
    if card.index == _SEVEN_OF_OROS:
        bits += 1 << _SEVEN_OF_OROS_BIT
    return bits


_BITS = [_card_bits(card) for card in ALL_CARDS]
_gains: dict[Move, int] = {}


def _gain(move: Move) -> int:
    """The packed counts a capture adds to its side (0 for a trail); not its escoba."""
    gain = _gains.get(move)
    if gain is None:
        gain = 0
        if move.capture:
            gain = _BITS[move.card.index] + sum(_BITS[card.index] for card in move.capture)
        _gains[move] = gain
    return gain


def captured_so_far(state: BotState) -> list[int]:
    """Each team's packed captures this round, from the public plays and the lucky deal."""
    teams = {info.seat: info.team for info in state.seats}
    packed = [0] * (max(teams.values()) + 1)
    lucky = state.lucky_deal
    if lucky is not None:
        packed[teams[lucky.seat]] += sum(_BITS[card.index] for card in lucky.cards)
        packed[teams[lucky.seat]] += lucky.escobas * _ESCOBA
    for play in state.history:
        if play.capture:
            packed[teams[play.seat]] += _gain(Move(play.card, play.capture))
            if play.escoba:
                packed[teams[play.seat]] += _ESCOBA
    return packed


# -- the value of a part-played round -------------------------------------------------------
#
# Between two sides, what a round's categories are worth before every card is taken: for "most
# cards" with a cards and b cards taken, the cards still out split between the two sides around
# half and half, with a spread wider than a coin per card (cards go in captures of two or three),
# so the point's value to the first side is P(it ends with more) - P(it ends with fewer). One
# table per category, computed once.
CARD_SPREAD = 1.6
OROS_SPREAD = 1.2
SEVENS_SPREAD = 1.0


def _margins(total: int, spread: float) -> tuple[list[list[float]], list[list[float]]]:
    """For a category of ``total`` cards won by the side with more than half: for a and b taken,
    P(first side wins it) - P(second side does), and P(they tie). The first side's share X of
    the ``out`` cards still out is a normal curve around half of them, cut to 0..out."""
    margin = [[0.0] * (total + 1) for _ in range(total + 1)]
    tie = [[0.0] * (total + 1) for _ in range(total + 1)]
    for a in range(total + 1):
        for b in range(total + 1 - a):
            out = total - a - b
            sd = max(0.5 * sqrt(out) * spread, 1e-9)
            weights = [exp(-(((x - out / 2) / sd) ** 2) / 2) for x in range(out + 1)]
            whole = sum(weights)
            win = lose = even = 0.0
            for x, weight in enumerate(weights):
                if 2 * (a + x) > total:
                    win += weight
                elif 2 * (a + x) < total:
                    lose += weight
                else:
                    even += weight
            margin[a][b] = (win - lose) / whole
            tie[a][b] = even / whole
    # What one side gains the other loses, exactly (the sums above round differently).
    fair = [[0.0] * (total + 1) for _ in range(total + 1)]
    for a in range(total + 1):
        for b in range(total + 1 - a):
            fair[a][b] = (margin[a][b] - margin[b][a]) / 2
    return fair, tie


_CARD_MARGIN, _ = _margins(40, CARD_SPREAD)
_OROS_MARGIN, _ = _margins(10, OROS_SPREAD)
_SEVENS_MARGIN, _SEVENS_TIE = _margins(4, SEVENS_SPREAD)
_SIXES_MARGIN, _ = _margins(4, SEVENS_SPREAD)


class RoundValue:
    """What a part-played round is worth to one team, in points, from the packed captures.

    Two sides: the expected points of every category from the counts so far (the tables above;
    the sevens as setenta, "most" or primera decide them: by sevens, then sixes), the seven of
    oros and the escobas, less the other side's. More sides: the captures by the expert's
    weights, ours less the others'.
    """

    __slots__ = ("team", "sides", "sevens", "seven_of_oros")

    def __init__(self, options: Mapping[str, Any], team: int, sides: int) -> None:
        self.team = team
        self.sides = sides
        self.sevens = options.get("sevens", "setenta")
        self.seven_of_oros = options.get("seven_of_oros", 1)

    def __call__(self, packed: Sequence[int]) -> float:
        team = self.team
        if self.sides != 2:
            ours = _linear(packed[team])
            return ours - sum(_linear(p) for t, p in enumerate(packed) if t != team)
        us, them = packed[team], packed[1 - team]
        value = (
            _CARD_MARGIN[us & 63][them & 63]
            + _OROS_MARGIN[us >> _OROS & 15][them >> _OROS & 15]
            + ((us >> _SEVEN_OF_OROS_BIT & 3) - (them >> _SEVEN_OF_OROS_BIT & 3))
            * self.seven_of_oros
            + ((us >> _ESCOBAS) - (them >> _ESCOBAS))
        )
        sevens = self.sevens
        our_sevens, their_sevens = us >> _SEVENS & 7, them >> _SEVENS & 7
        if sevens == "per_suit":
            value += our_sevens - their_sevens
        elif sevens != "none":
            value += _SEVENS_MARGIN[our_sevens][their_sevens]
            if sevens != "most":
                value += (
                    _SEVENS_TIE[our_sevens][their_sevens]
                    * _SIXES_MARGIN[us >> _SIXES & 7][them >> _SIXES & 7]
                )
        return value


_EXPERT_WEIGHTS = expert.Weights()


def _linear(packed: int) -> float:
    """The captures by the expert's weights (for more than two sides), in points."""
    weights = _EXPERT_WEIGHTS
    return PRIOR_SCALE * (
        weights.card * (packed & 63)
        + weights.oros * (packed >> _OROS & 15)
        + weights.seven * (packed >> _SEVENS & 7)
        + weights.seven_of_oros * (packed >> _SEVEN_OF_OROS_BIT & 3)
        + weights.escoba * (packed >> _ESCOBAS)
    )


# -- the rollout policy ----------------------------------------------------------------------

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


def play_on(
    game: Game, rng: Random, packed: list[int], teams: Sequence[int], plays: int = -1
) -> None:
    """Play ``game`` on, every seat with the same greedy policy (what a move takes, sweeps
    first, less the risk of leaving a table worth 5 to 14, which the next player sweeps with one
    card; now and then a random move), adding each side's captures to ``packed`` (``teams``
    gives each seat's side).

    With ``plays`` < 0 it plays to the end of the round (the caller then reads the game's
    totals); otherwise it stops after ``plays`` plays or at the round's end. The table's size
    and worth are followed here rather than read back on every play."""
    number = game.round
    table = game.table
    size = len(table)
    worth = 0
    for card in table:
        worth += card.value
    scores = _scores
    gains = _gains
    while plays != 0 and not game.is_over and game.round == number:
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
        if move.capture:
            gain = gains.get(move)
            if gain is None:
                gain = _gain(move)
            if len(move.capture) == size:
                gain += _ESCOBA
            packed[teams[game.current_seat]] += gain
            size -= len(move.capture)
            worth += move.card.value - 15
        else:
            size += 1
            worth += move.card.value
        plays -= 1
        game.apply(move)


def round_out_value(game: Game, before: Sequence[int], team: int) -> float:
    """A played-out round's value to ``team``: its points less the best other side's, and
    ``GAME_WIN`` more (or less) when it decided the game."""
    gains = [a - b for a, b in zip(game.totals, before, strict=True)]
    value = float(gains[team] - max(g for t, g in enumerate(gains) if t != team))
    result = game.result
    if result is not None:
        if result.winner == team:
            value += GAME_WIN
        elif result.winner is not None:
            value -= GAME_WIN
    return value


def rollout(
    game: Game, team: int, rng: Random, plays: int = -1, teams: Sequence[int] = ()
) -> float:
    """One rollout of ``game`` (see ``play_on``) and its value to ``team``: with ``plays`` < 0
    the round played out and scored (``round_out_value``), otherwise the captures made in those
    plays, valued as ``RoundValue`` values a round that starts from them."""
    before = game.totals
    options = game.ruleset.options
    teams = teams or [game.ruleset.team_of(seat) for seat in range(options["players"])]
    packed = [0] * (max(teams) + 1)
    play_on(game, rng, packed, teams, plays)
    if plays < 0:
        return round_out_value(game, before, team)
    return RoundValue(options, team, len(packed))(packed)


def solve(game: Game, team: int, teams: Sequence[int], before: Sequence[int], number: int) -> float:
    """The exact value to ``team`` of the rest of round ``number`` (``round_out_value``; the
    game may have left that round already), every seat playing its team's best (minimax with
    alpha-beta), in a game whose hands are all known: the last deal of a sample. The caller
    keeps it to a few cards a hand."""
    return _minimax(game, team, teams, before, number, -1e9, 1e9)


def _minimax(
    game: Game,
    team: int,
    teams: Sequence[int],
    before: Sequence[int],
    number: int,
    alpha: float,
    beta: float,
) -> float:
    if game.is_over or game.round != number:
        return round_out_value(game, before, team)
    moves = game.legal_moves()
    if len(moves) > 1:
        # Captures first, the bigger first: the best reply usually comes early, so alpha-beta
        # cuts more.
        moves.sort(key=lambda move: -len(move.capture))
    ours = teams[game.current_seat] == team
    best = -1e9 if ours else 1e9
    for move in moves:
        child = game.clone()
        child.apply(move)
        value = _minimax(child, team, teams, before, number, alpha, beta)
        if ours:
            if value > best:
                best = value
                if best > alpha:
                    alpha = best
        elif value < best:
            best = value
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    return best


# -- the search ------------------------------------------------------------------------------


def search(
    state: BotState,
    deadline: float,
    max_deals: int | None = None,
    sampler: Any = None,
) -> tuple[Move, list[tuple[Move, int, float]]]:
    """The best move by average rollout value over sampled deals, with each move's statistics
    (move, deals, mean value): deals until ``deadline`` (``time.perf_counter``) or ``max_deals``,
    and always at least one. ``sampler`` (anything with ``sample(rng)``, by default a
    ``Determinizer`` of the request) deals the unseen cards: the oracle example gives one that
    deals the hands it remembers."""
    # The request carries everything the sampler needs: hand, table, plays, lucky deal, counts.
    sampler = sampler or Determinizer(state)
    moves = list(state.legal_moves)
    prior = expert_scores(state)
    totals = [0.0] * len(moves)
    team = state.team
    rng = Random(f"{state.game_id}/{state.round}/{len(state.history)}/{state.seat}")
    teams = [info.team for info in sorted(state.seats, key=lambda info: info.seat)]
    start = captured_so_far(state)
    value_of = RoundValue(state.options, team, len(start))
    # Before the last deal, each rollout stops LOOKAHEAD plays into the next deal and the round
    # is valued from the captures; in the last deal it plays the round out and scores it.
    plays = -1
    if state.deck_remaining > 0:
        plays = sum(info.hand_size for info in state.seats) - 1 + LOOKAHEAD
    # In the last deal with few cards left in the hands, each sample is solved exactly; when the
    # only hidden cards are one other hand's, every sample is the same deal, so one is enough.
    exact = state.deck_remaining == 0 and sum(info.hand_size for info in state.seats) <= SOLVE_CARDS
    hidden_hands = sum(1 for info in state.seats if info.seat != state.seat and info.hand_size)
    one_world = exact and hidden_hands <= 1
    size = len(state.table)
    first = [start[:] for _ in moves]
    for index, move in enumerate(moves):
        if move.capture:
            first[index][team] += _gain(move) + (_ESCOBA if len(move.capture) == size else 0)
    totals_before = list(state.scores)
    deals = 0
    while True:
        world = sampler.sample(rng)
        for index, move in enumerate(moves):
            game = world.clone()
            game.apply(move)
            if exact:
                totals[index] += solve(game, team, teams, totals_before, state.round)
                continue
            packed = first[index][:]
            play_on(game, rng, packed, teams, plays)
            if plays < 0:
                totals[index] += round_out_value(game, totals_before, team)
            else:
                totals[index] += value_of(packed)
        deals += 1
        if one_world or time.perf_counter() >= deadline or deals == max_deals:
            break
    # The expert's one-ply judgement of each move counts as PRIOR_DEALS deals: with few deals
    # (a short time bank, a loaded machine) the choice is the expert's, with many the rollouts'.
    # The rollouts' values share an offset (the round so far), which leaves the choice alone.
    # An exact solve of the one possible deal needs no prior: it only breaks ties.
    weight = PRIOR_TIE if one_world else PRIOR_DEALS
    means = [
        (weight * PRIOR_SCALE * prior[index] + totals[index]) / (weight + deals)
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
    with _one_more_search() as others:
        # Counted from the request's arrival: under a burst of games, waiting for the core and
        # parsing the body before `choose` ran already took some of the call's time.
        deadline = state.received_at + budget_seconds(state, others)
        if deadline - time.perf_counter() < MIN_BUDGET_MS / 1000.0:
            # Too little left for the samples and one deal (a bank under about 33 ms, or a
            # request that waited): they would make the answer late; expert's takes about 1 ms.
            return expert.choose(state)
        move, _ = search(state, deadline)
    return move
