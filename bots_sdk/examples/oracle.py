"""The oracle: a cheater, kept to prove that the arena gives a bot nothing to cheat with.

It keeps every hand it is ever dealt and links whatever it can: a deal is known by its round
and its opening table (the cards the round's first table held), so when two games share a deal
(a duplicate set: same cards, seats swapped) or one bot holds two seats of one game (a
shared-hand team), the hand it was dealt in one seat is the hand that seat holds in the other.
It then searches as the `search` example does, but over samples that deal every hand it
remembers to its seat (a perfect-information search once all the hidden hands are known).

Nothing else in a request links two games: `game.match_id` is the game's own id, and rated play
names no seat before the end notice (docs/bot-protocol.md). So on fresh deals the oracle links
nothing and plays exactly as its honest twin does (the same search, memory wiped each game):
`benchmarks/oracle.py` measures what it gains on duplicate sets and on fresh deals.

The memory is the process's (`ORACLE`), which is what a cheating server would keep; a remembered
hand that disagrees with what the request shows (another deal with the same opening table) is
ignored. Serve it with `python -m bots_sdk serve bots_sdk.examples.oracle:choose`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from games.engine import ALL_CARDS, Card, Determinizer, Game, Move
from games.engine.state import HAND_SIZE, TABLE_SIZE

from ..state import BotState
from . import expert, search

__author__ = "Escoba Arena examples"

# A deal: the round and its opening table (what fixes the round's cards for a given seed).
DealKey = tuple[int, frozenset[int]]


def opening_table(state: BotState) -> frozenset[int]:
    """The round's opening table, from the request alone: the lucky deal's cards, or every card
    that has been on the table this round except those trailed onto it since."""
    if state.lucky_deal is not None:
        return frozenset(card.index for card in state.lucky_deal.cards)
    trailed: set[int] = set()
    taken: set[int] = set()
    for play in state.history:
        if play.capture:
            taken.update(card.index for card in play.capture)
        else:
            trailed.add(play.card.index)
    return frozenset(({card.index for card in state.table} | taken) - trailed)


def deal_number(state: BotState) -> int:
    """Which deal of the round the hands come from (1 for the first)."""
    players = len(state.seats)
    position = len(ALL_CARDS) - state.deck_remaining
    first = HAND_SIZE * players + TABLE_SIZE
    return 1 + max(0, position - first) // (HAND_SIZE * players)


def _plays_of_deal(state: BotState) -> list[Any]:
    """This deal's plays: each deal is played out, three cards a seat, before the next."""
    per_deal = HAND_SIZE * len(state.seats)
    return list(state.history[(deal_number(state) - 1) * per_deal :])


class Oracle:
    """A memory of dealt hands and a search that uses it (see the module)."""

    def __init__(self, max_deals: int | None = None) -> None:
        self.max_deals = max_deals
        self._dealt: dict[DealKey, dict[int, dict[int, frozenset[int]]]] = {}
        self._lock = threading.Lock()
        self.links = 0  # requests in which it knew a hand it was not dealt there

    def forget(self) -> None:
        """Wipe the memory: the honest twin is an oracle that forgets after every game."""
        with self._lock:
            self._dealt.clear()

    def remember(self, state: BotState) -> None:
        """Keep the hand this seat was dealt in this deal (its hand plus what it played since)."""
        played = {play.card.index for play in _plays_of_deal(state) if play.seat == state.seat}
        dealt = frozenset({card.index for card in state.hand} | played)
        key = (state.round, opening_table(state))
        with self._lock:
            deals = self._dealt.setdefault(key, {})
            deals.setdefault(deal_number(state), {})[state.seat] = dealt

    def known_hands(self, state: BotState) -> dict[int, tuple[Card, ...]]:
        """The other seats' hands it knows now, by seat: a remembered dealt hand less what that
        seat played since, kept only when it fits what the request shows."""
        key = (state.round, opening_table(state))
        with self._lock:
            remembered = dict(self._dealt.get(key, {}).get(deal_number(state), {}))
        unseen = {card.index for card in state.unseen_cards()}
        plays = _plays_of_deal(state)
        known: dict[int, tuple[Card, ...]] = {}
        claimed: set[int] = set()
        for info in state.seats:
            if info.seat == state.seat or info.seat not in remembered:
                continue
            played = {play.card.index for play in plays if play.seat == info.seat}
            hand = remembered[info.seat] - played
            fits = len(hand) == info.hand_size and hand <= unseen and not hand & claimed
            if fits and played <= remembered[info.seat]:
                known[info.seat] = tuple(ALL_CARDS[index] for index in sorted(hand))
                claimed |= hand
        return known

    def choose(self, state: BotState) -> Move:
        self.remember(state)
        if len(state.legal_moves) == 1:
            return state.legal_moves[0]
        known = self.known_hands(state)
        if known:
            self.links += 1
        sampler = KnownHandsSampler(state, known)
        if self.max_deals is not None:
            move, _ = search.search(state, math.inf, self.max_deals, sampler=sampler)
            return move
        deadline = state.received_at + search.budget_seconds(state)
        if deadline - time.perf_counter() < search.MIN_BUDGET_MS / 1000.0:
            return expert.choose(state)
        move, _ = search.search(state, deadline, sampler=sampler)
        return move


class KnownHandsSampler:
    """A ``Determinizer`` whose samples deal each known hand to its seat; the other unseen cards
    go at random to the other hands and the deck, as before."""

    def __init__(self, state: BotState, known: Mapping[int, Sequence[Card]]) -> None:
        self._sampler = Determinizer(state)
        self._known = {seat: {card.index for card in cards} for seat, cards in known.items()}

    def sample(self, rng: Random) -> Game:
        game = self._sampler.sample(rng)
        if not self._known:
            return game
        hands: list[list[int]] = game._hands
        deck: list[int] = game._deck
        position: int = game._deck_position
        for seat, wanted in self._known.items():
            hand = hands[seat]
            for card in wanted:
                if card in hand:
                    continue
                spare = next(index for index in hand if index not in wanted)
                hand[hand.index(spare)] = card
                holder = next(
                    (other for other, cards in enumerate(hands) if other != seat and card in cards),
                    None,
                )
                if holder is not None:
                    other = hands[holder]
                    other[other.index(card)] = spare
                    other.sort()
                else:
                    deck[deck.index(card, position)] = spare
            hand.sort()
        return game


# The process's oracle: what a server that kept every request would remember.
ORACLE = Oracle()


def choose(state: BotState) -> Move:
    return ORACLE.choose(state)
