"""Determinization: full game states consistent with what one seat knows.

A seat sees its own hand, the table, this round's plays, the lucky deal and every seat's public
counts, but not the other hands or the order of the deck. A search over hidden information
(Monte Carlo rollouts, information-set MCTS) plays many games from states that agree with all of
that and differ only in where the unseen cards are. ``Determinizer`` works out once what is
known and what is not; each ``sample`` then deals the unseen cards at random into the other
hands (their public sizes) and the deck (its public size), with the caller's ``random.Random``,
so a fixed seed gives the same samples.

Every unseen card is equally likely to be in any hidden slot: the samples are uniform over the
deals consistent with the view. (A bot that infers more, say that an opponent would have
captured had it held a seven, can weigh the samples itself.)
"""

from __future__ import annotations

from collections.abc import Mapping
from random import Random
from typing import Any

from .cards import VALUE_KEYS
from .errors import EscobaError
from .moves import Move
from .rulesets import Ruleset
from .state import HAND_SIZE, TABLE_SIZE, Game, _Round

# Seeds for the rounds after the sampled one: any int works, the deals are then the seed's.
_SEED_BITS = 62


class Determinizer:
    """The known part of a position, ready to be completed many times by ``sample``.

    ``view`` is a ``GameView`` or anything with its fields (the bots SDK's ``BotState`` too,
    whose ``ruleset`` is the wire's dict). ``EscobaError`` when the view contradicts itself,
    e.g. hand sizes that do not add up with the unseen cards.
    """

    __slots__ = ("seat", "unseen", "hidden", "_template", "_deck_position")

    def __init__(self, view: Any) -> None:
        ruleset = view.ruleset
        if isinstance(ruleset, Mapping):
            ruleset = Ruleset.from_dict(ruleset)
        players = ruleset.players
        seats = sorted(view.seats, key=lambda info: info.seat)
        if [info.seat for info in seats] != list(range(players)):
            raise EscobaError(f"a view of a {players}-player game needs seats 0 to {players - 1}")
        seat = view.seat
        hand = sorted(card.index for card in view.hand)
        table = sorted(card.index for card in view.table)
        lucky = getattr(view, "lucky_deal", None)
        lucky_cards = sorted(card.index for card in lucky.cards) if lucky is not None else []
        teams = [ruleset.team_of(s) for s in range(players)]

        seen = set(hand) | set(table) | set(lucky_cards)
        captured = [0] * ruleset.num_teams
        if lucky is not None:
            for card in lucky_cards:
                captured[teams[lucky.seat]] |= 1 << card
        plays = []
        trailed = set()
        taken_from_table = set()
        last_capturer = lucky.seat if lucky is not None else -1
        for play in view.history:
            move = Move(play.card, play.capture)
            plays.append(move.code | play.seat << 1 | bool(play.escoba))
            seen.add(move.card_index)
            seen.update(move.taken)
            if move.mask:
                captured[teams[play.seat]] |= move.won
                taken_from_table.update(move.taken)
                last_capturer = play.seat
            else:
                trailed.add(move.card_index)
        unseen = [card for card in range(40) if card not in seen]
        hidden = [(s, seats[s].hand_size) for s in range(players) if s != seat]
        deck_remaining = view.deck_remaining
        if len(unseen) != sum(size for _, size in hidden) + deck_remaining:
            raise EscobaError(
                f"{len(unseen)} cards are unseen, but the other hands and the deck hold "
                f"{sum(size for _, size in hidden) + deck_remaining}"
            )
        if len(hand) != seats[seat].hand_size:
            raise EscobaError(f"seat {seat} holds {len(hand)} cards, not {seats[seat].hand_size}")
        by_seat = [0] * players
        for play in view.history:
            if play.capture:
                by_seat[play.seat] += len(play.capture) + 1
        if lucky is not None:
            by_seat[lucky.seat] += len(lucky_cards)
        if by_seat != [info.captured for info in seats]:
            raise EscobaError(
                f"the plays capture {by_seat} cards by seat, but the seats show "
                f"{[info.captured for info in seats]}"
            )

        # The round's opening table: the lucky deal's cards, or every card that has been on the
        # table this round except those trailed onto it since.
        if lucky is not None:
            opening = lucky_cards
        else:
            opening = sorted((set(table) | taken_from_table) - trailed)
        deck_position = 40 - deck_remaining
        first_deal = HAND_SIZE * players + TABLE_SIZE
        deals = 1 + max(0, deck_position - first_deal) // (HAND_SIZE * players)

        game = Game.__new__(Game)
        game.ruleset = ruleset
        game.seed = 0
        game._players = players
        game._teams = teams
        game._num_teams = ruleset.num_teams
        game._optional = ruleset.options["capture"] == "optional"
        game._totals = list(view.scores)
        game._result = None
        game._forfeit_reason = None
        game._round_number = view.round
        game._dealer = view.dealer
        game._deck = []
        game._deck_position = deck_position
        game._hands = [[] for _ in range(players)]
        game._hands[seat] = hand
        game._table = table
        game._table_key = sum([VALUE_KEYS[card] for card in table])
        game._table_mask = sum([1 << card for card in table])
        game._captured = captured
        game._seat_captured = [info.captured for info in seats]
        game._escobas = [info.escobas for info in seats]
        game._last_capturer = last_capturer
        game._turn = (view.dealer + 1 + len(plays)) % players
        record = _Round(view.dealer, opening)
        if lucky is not None:
            record.lucky = (lucky.seat, lucky_cards, lucky.escobas)
        record.deals = deals
        record.plays = plays
        game._rounds = [record]
        game._record = record
        game._plays = record.plays
        self.seat = seat
        self.unseen = tuple(unseen)
        self.hidden = tuple(hidden)
        self._template = game
        self._deck_position = deck_position

    def sample(self, rng: Random) -> Game:
        """A full game state that agrees with the view: the unseen cards dealt at random to the
        other hands and the deck, and a random seed for the rounds after this one.

        Its ``log()`` holds this round only, with the deals made up where the view does not say.
        """
        cards = list(self.unseen)
        rng.shuffle(cards)
        game = self._template.clone()
        game.seed = rng.getrandbits(_SEED_BITS)
        start = 0
        for seat, size in self.hidden:
            game._hands[seat] = sorted(cards[start : start + size])
            start += size
        # The deck as the log reads it back: the cards dealt so far (known or not, in no
        # particular order) and then the sampled rest, dealt from the front.
        rest = cards[start:]
        left = set(rest)
        deck = [card for card in range(40) if card not in left] + rest
        game._deck = deck
        game._record.deck = deck
        return game


def determinize(view: Any, seed: int) -> Game:
    """One game state consistent with ``view`` (see ``Determinizer``), reproducible by ``seed``."""
    return Determinizer(view).sample(Random(seed))
