"""The game state: deals, turns, captures, round scoring and the end of the game.

Internally cards are small ints (``Card.index``), the table is a sorted list plus a bit mask and
each side's captured cards are one bit mask, so a play costs a few list and int operations. The
full log is kept as compact records and only turned into JSON types by ``log()``.

This source is also compiled: ``state.pxd`` gives the fields and the hot locals C types (see
``_build.py``). So that one source serves both builds, the code sticks to what compiles to plain
C there and stays cheap for the interpreter: ints for seats with -1 for "nobody" rather than
None, typed local aliases of module caches, explicit field copies in ``clone``.
"""

from __future__ import annotations

from bisect import insort
from hashlib import blake2b
from random import Random
from typing import Any

from .captures import _by_key as _BY_KEY
from .captures import captures_by_card
from .cards import ALL_CARDS, BITS, NAMES, VALUE_KEYS, VALUES, Card, cards_of_mask
from .errors import EscobaError, IllegalMoveError
from .moves import _CACHE as _MOVES
from .moves import Move, _interned, _MoveFields
from .rulesets import Ruleset
from .scoring import add_score_breakdown, round_totals, score_log, score_round, strict_winner
from .views import GameView, Play, Result, SeatPublic, lucky_deal_of

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from . import _nocython as cython  # type: ignore[no-redef]

_TRAILS = tuple(_interned(card, 0) for card in range(40))
HAND_SIZE = 3
TABLE_SIZE = 4


def round_deck(seed: int, round_number: int) -> list[int]:
    """The shuffled deck (card indices, dealt from the front) of a round.

    It depends only on the seed and the round number, and is easy to reproduce in any language:
    N is the BLAKE2b-256 digest of ``"escoba/<seed>/<round>"`` read as a big-endian integer;
    for size = 40 down to 1, ``N, k = divmod(N, size)`` and the next card is the ``k``-th
    (0-based) of the cards not yet drawn, in canonical order.
    """
    text = f"escoba/{seed}/{round_number}".encode()
    number = int.from_bytes(blake2b(text, digest_size=32).digest(), "big")
    remaining = list(range(40))
    deck = []
    # Same digits as dividing by 40, 39, ... one at a time, but the 256-bit number is divided
    # only once per group of sizes; the rest is arithmetic on small ints.
    for product, sizes in _DECK_GROUPS:
        number, low = divmod(number, product)
        for size in sizes:
            index = low % size
            deck.append(remaining.pop(index))
            low //= size
    return deck


def _deck_groups() -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The sizes 40, 39, ..., 1 cut into runs whose product fits a small int (< 2**30)."""
    groups = []
    product, sizes = 1, []
    for size in range(40, 0, -1):
        if product * size >= 2**30:
            groups.append((product, tuple(sizes)))
            product, sizes = 1, []
        product *= size
        sizes.append(size)
    groups.append((product, tuple(sizes)))
    return tuple(groups)


_DECK_GROUPS = _deck_groups()


def round_outcome(options: Any, totals: list[int], round_number: int) -> Result | None:
    """How the game ends after round ``round_number`` with these totals, or None to play on.

    Once a side has reached the target, the strictly highest total wins; a tie for the highest
    plays another round, or ends in a shared win under the ``shared`` tie policy.
    """
    top = max(totals)
    if top >= options["target"]:
        leaders = [team for team, total in enumerate(totals) if total == top]
        if len(leaders) == 1:
            return Result(leaders[0], list(totals), "target")
        if options["tie"] == "shared":
            return Result(None, list(totals), "shared")
    if round_number >= options["max_rounds"]:
        return Result(None, list(totals), "max_rounds")
    return None


def decode_play(code: int) -> tuple[int, Move, bool]:
    """(seat, move, escoba) of a play as the game records it: an int rather than a tuple, which
    keeps tens of objects per round away from the garbage collector."""
    return code >> 1 & 3, _move_of(code >> 3), bool(code & 1)


def _move_of(key: int) -> Move:
    """The move of a play code's key (``code >> 3``: ``mask << 6 | card``). The compiled
    ``play_random`` records plays without interning their moves, so a move may be interned only
    when a view or a log first reads it."""
    move = _MOVES.get(key)
    if move is None:
        move = _interned(key & 63, key >> 6)
    return move


class _ByPlay(dict):  # type: ignore[type-arg]
    """Immutable values derived from a play code, built on first use and then shared.

    A play code is a move with a seat and an escoba flag; about 20,000 moves turn up in 1,000
    games, so the cache is emptied when it reaches ``_PLAY_LIMIT`` entries (the values are
    plain values: nothing depends on their identity).
    """

    def __init__(self, build: Any) -> None:
        super().__init__()
        self.build = build

    def __missing__(self, code: int) -> Any:
        if len(self) >= _PLAY_LIMIT:
            self.clear()
        value = self[code] = self.build(*decode_play(code))
        return value


_PLAY_LIMIT = 100_000


# What a view's history shows of a play.
_PLAY_VIEWS = _ByPlay(lambda seat, move, escoba: Play(seat, move.card, move.capture, escoba))


# A game and its round records hold ints, lists of ints, the ruleset, the result and the
# round's score: never a reference cycle. In the compiled build they stay out of the garbage
# collector, so the clones a search makes do not bring the next collection closer.
@cython.no_gc
@cython.cclass
class _Round:
    """The log of one round, in card indices; completed rounds are never modified again."""

    __slots__ = (
        "dealer", "deck", "deals", "table", "lucky", "plays", "leftover", "captured", "escobas",
        "score", "totals",
    )  # fmt: skip

    def __init__(self, dealer: int, table: list[int]) -> None:
        self.dealer = dealer
        self.table = table
        self.lucky: tuple[int, list[int], int] | None = None
        self.deck: list[int] = []
        self.deals = 0  # how many deals were made: the cards are read back from the deck
        self.plays: list[int] = []  # see decode_play
        self.leftover: tuple[int, list[int]] | None = None
        # When the round is over: each side's captured cards (bit masks) and escobas, from
        # which _round_log builds the score the first time a log asks for it, and the totals.
        self.captured: list[int] | None = None
        self.escobas: list[int] | None = None
        self.score: list[dict[str, Any]] | None = None
        self.totals: list[int] | None = None

    def copy(self) -> _Round:
        other = _Round(self.dealer, self.table)
        other.deck, other.deals = self.deck, self.deals
        other.lucky, other.plays = self.lucky, list(self.plays)
        other.leftover, other.score, other.totals = self.leftover, self.score, self.totals
        other.captured, other.escobas = self.captured, self.escobas
        return other


@cython.no_gc
@cython.cclass
class Game:
    """One game of Escoba under a ruleset, from a seed. Build it with ``Game.new``."""

    # Slots rather than a __dict__: every play reads and writes a dozen of these, and slot
    # access is the fastest attribute access CPython has.
    __slots__ = (
        "ruleset", "seed", "_players", "_teams", "_num_teams", "_optional",
        "_totals", "_rounds", "_result", "_forfeit_reason", "_round_number", "_dealer", "_deck",
        "_deck_position", "_hands", "_table", "_table_key", "_table_mask", "_captured",
        "_seat_captured", "_escobas", "_last_capturer", "_record", "_plays", "_turn",
    )  # fmt: skip

    ruleset: Ruleset
    seed: int

    @staticmethod
    def new(ruleset: Ruleset, seed: int) -> Game:
        """A new game; round ``r`` is dealt from ``round_deck(seed, r)``, so equal seeds deal
        equal cards round by round whoever sits where."""
        if not isinstance(ruleset, Ruleset):
            raise EscobaError("a game needs a Ruleset")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise EscobaError(f"the seed must be an int, not {seed!r}")
        game = Game()
        options = ruleset.options
        game.ruleset = ruleset
        game.seed = seed
        game._players = options["players"]
        game._teams = [ruleset.team_of(seat) for seat in range(game._players)]
        game._num_teams = ruleset.num_teams
        game._optional = options["capture"] == "optional"
        game._totals = [0] * game._num_teams
        game._rounds = []
        game._result = None
        game._forfeit_reason = None
        game._start_round(1, 0)
        return game

    # -- reading the state ---------------------------------------------------------------

    @property
    def current_seat(self) -> int | None:
        return self._turn if self._turn >= 0 else None

    @property
    def is_over(self) -> bool:
        return self._result is not None

    @property
    def result(self) -> Result | None:
        return self._result

    @property
    def round(self) -> int:
        return self._round_number

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def totals(self) -> list[int]:
        """Game totals by team, not counting the round being played."""
        return list(self._totals)

    @property
    def table(self) -> list[Card]:
        return [ALL_CARDS[c] for c in self._table]

    def hand(self, seat: int) -> list[Card]:
        return [ALL_CARDS[c] for c in sorted(self._hands[seat])]

    def legal_moves(self) -> list[Move]:
        """The legal moves of the seat to play: by hand card in canonical order, each card's
        captures in canonical order, then its trail when allowed. Empty when the game is over."""
        seat = self._turn
        if seat < 0:
            return []
        table = self._table
        by_card = self._captures()
        moves = _MOVES
        trails = _TRAILS
        optional = self._optional
        one = 1
        # No local aliases for legal.append or moves.get: CPython 3.11 specialises the plain
        # method calls, which beats creating a bound method on every call.
        legal: list[Move] = []
        hand = self._hands[seat]
        for card in hand:
            combos = by_card[card]
            for positions in combos:
                mask = 0
                for position in positions:
                    taken = table[position]
                    mask |= one << taken
                move = moves.get(mask << 6 | card)
                if move is None:
                    move = _interned(card, mask)
                legal.append(move)
            if optional or not combos:
                legal.append(trails[card])
        return legal

    # -- changing the state --------------------------------------------------------------

    def apply(self, move: Move) -> None:
        """Play ``move`` for the seat whose turn it is; ``IllegalMoveError`` says why not.

        Checks the rules directly instead of searching ``legal_moves()``: the card is in the
        hand, the captured cards are on the table and make 15 with it, and a trail is only
        forbidden when capture is forced and the card can make 15.
        """
        seat = self._turn
        if seat < 0 or type(move) is not Move:
            raise self._why_illegal(move)
        fields = move  # the compiled build reads the move's C fields through this typed name
        card = fields.card_index
        mask = fields.mask
        if card not in self._hands[seat]:
            raise self._why_illegal(move)
        if mask:
            if (mask & self._table_mask) != mask or fields.total != 15:
                raise self._why_illegal(move)
        elif not self._optional:
            by_card = self._captures()
            if by_card[card]:
                raise self._why_illegal(move)
        self._play(fields, seat)

    def play_random(self, rng: Random, plays: int = -1, to_game_end: bool = False) -> int:
        """Play on with uniformly random legal moves; returns how many plays were made.

        Each play is the one ``legal_moves()[int(rng.random() * len(legal_moves()))]`` would
        pick, so the same ``rng`` state plays the same moves as that loop in Python. It stops
        after ``plays`` plays (no limit when negative), when the game ends, and at the end of
        the round being played unless ``to_game_end``: a search's uniform rollout. The engine
        runs it because in the compiled build the loop, the choice and the play are then C, and
        the legal moves are counted rather than built, so only the chosen one is looked up.
        """
        draw = getattr(rng, "random", None)
        if not callable(draw):
            raise EscobaError(f"play_random needs a random.Random, not {rng!r}")
        if not isinstance(plays, int) or isinstance(plays, bool):
            raise EscobaError(f"plays must be an int, not {plays!r}")
        limit = plays if 0 <= plays < 1 << 62 else -1  # more than a game has: no limit
        if cython.compiled and len(self._deck) == 40:
            return self._play_random_arrays(draw, limit, to_game_end)
        number = self._round_number
        made = 0
        while made != limit and self._turn >= 0:
            if not to_game_end and self._round_number != number:
                break
            self._play_random_one(draw())
            made += 1
        return made

    def _play_random_one(self, fraction: float) -> None:
        """Play the legal move at ``int(fraction * count)`` in ``legal_moves()``'s order."""
        if not 0.0 <= fraction < 1.0:  # a generator of our caller's that does not keep to [0, 1)
            raise EscobaError(f"rng.random() must be in [0, 1), not {fraction!r}")
        seat = self._turn
        table = self._table
        by_card = self._captures()
        optional = self._optional
        hand = self._hands[seat]
        count = 0
        for card in hand:
            combos = by_card[card]
            count += len(combos)
            if optional or not combos:
                count += 1
        chosen = int(fraction * count)
        for card in hand:
            combos = by_card[card]
            if chosen < len(combos):
                one = 1
                mask = 0
                for position in combos[chosen]:
                    taken = table[position]
                    mask |= one << taken
                moves = _MOVES
                move = moves.get(mask << 6 | card)
                if move is None:
                    move = _interned(card, mask)
                self._play(move, seat)
                return
            chosen -= len(combos)
            if optional or not combos:
                if chosen == 0:
                    trails = _TRAILS
                    self._play(trails[card], seat)
                    return
                chosen -= 1

    def _play_random_arrays(self, draw: Any, limit: int, to_game_end: bool) -> int:
        """``play_random`` in the compiled build: the same plays, on C arrays.

        The round's hands, table, deck and piles are copied into C arrays, played there, and
        written back when the round ends or the call returns (even by an exception), so the
        rest of the engine sees the same state as after ``_play``. Each play's captures are
        found by a search of the table in C (``_search_sums``) rather than read
        from the memo, and its move is not interned (``_move_of`` does that when a view or a
        log reads the play). Only the compiled build runs this: in the interpreter the
        memo and ``_play_random_one`` are faster, so the pure build keeps them.
        """
        hands = cython.declare(cython.int[160])  # seat * 40 + i: more than any hand can hold
        sizes = cython.declare(cython.int[4])
        teams = cython.declare(cython.int[4])
        seat_captured = cython.declare(cython.int[4])
        escobas = cython.declare(cython.int[4])
        captured = cython.declare(cython.ulonglong[4])
        table = cython.declare(cython.int[40])
        deck = cython.declare(cython.int[40])
        counts = cython.declare(cython.int[15])
        positions = cython.declare(cython.int[40])
        keys = cython.declare(cython.longlong[40])  # VALUE_KEYS, as a C array
        for i in range(40):
            keys[i] = VALUE_KEYS[i]
        one = 1
        optional = self._optional
        players = self._players
        made = 0
        while made != limit and self._turn >= 0:
            # Load the round being played.
            record = self._record
            plays = self._plays
            dealer = self._dealer
            turn = self._turn
            for seat in range(players):
                hand = self._hands[seat]
                sizes[seat] = len(hand)
                for i in range(sizes[seat]):
                    hands[seat * 40 + i] = hand[i]
                teams[seat] = self._teams[seat]
                seat_captured[seat] = self._seat_captured[seat]
                escobas[seat] = self._escobas[seat]
            for team in range(self._num_teams):
                captured[team] = self._captured[team]
            table_list = self._table
            size = len(table_list)
            for i in range(size):
                table[i] = table_list[i]
            position = self._deck_position
            for i in range(position, 40):
                deck[i] = self._deck[i]
            table_key = self._table_key
            table_mask = self._table_mask
            last_capturer = self._last_capturer
            round_over = False
            try:
                while made != limit:
                    fraction = draw()
                    if not 0.0 <= fraction < 1.0:
                        raise EscobaError(f"rng.random() must be in [0, 1), not {fraction!r}")
                    seat = turn
                    base = seat * 40
                    for i in range(15):
                        counts[i] = 0
                    _search_sums(table, size, 0, 0, counts)
                    count = 0
                    for i in range(sizes[seat]):
                        found = counts[14 - (hands[base + i] >> 2)]
                        count += found
                        if optional or found == 0:
                            count += 1
                    chosen = cython.cast(cython.int, fraction * count)
                    for i in range(sizes[seat]):
                        card = hands[base + i]
                        found = counts[14 - (card >> 2)]
                        if chosen < found or (chosen == found and (optional or found == 0)):
                            break
                        chosen -= found
                        if optional or found == 0:
                            chosen -= 1
                    for j in range(i + 1, sizes[seat]):
                        hands[base + j - 1] = hands[base + j]
                    sizes[seat] -= 1
                    escoba = False
                    if chosen < found:  # a capture: the chosen one of the card's captures
                        taken = _search_sums(table, size, 14 - (card >> 2), chosen, positions)
                        mask = 0
                        kept = 0
                        j = 0
                        for i in range(size):
                            if j < taken and positions[j] == i:
                                mask |= one << table[i]
                                table_key -= keys[table[i]]
                                j += 1
                            else:
                                table[kept] = table[i]
                                kept += 1
                        size = kept
                        table_mask ^= mask
                        captured[teams[seat]] |= mask | one << card
                        seat_captured[seat] += taken + 1
                        last_capturer = seat
                        escoba = size == 0
                        if escoba:
                            escobas[seat] += 1
                    else:  # the card's trail: into the table, which stays sorted
                        mask = 0
                        i = size
                        while i > 0 and table[i - 1] > card:
                            table[i] = table[i - 1]
                            i -= 1
                        table[i] = card
                        size += 1
                        table_key += keys[card]
                        table_mask |= one << card
                    plays.append((mask << 6 | card) << 3 | seat << 1 | escoba)
                    made += 1
                    seat += 1
                    if seat == players:
                        seat = 0
                    if sizes[seat]:
                        turn = seat
                    elif position < 40:  # deal as _deal_hands does
                        seat = dealer
                        for _step in range(players):
                            seat = seat + 1 if seat + 1 < players else 0
                            first, second, third = _in_order(
                                deck[position], deck[position + 1], deck[position + 2]
                            )
                            hands[seat * 40] = first
                            hands[seat * 40 + 1] = second
                            hands[seat * 40 + 2] = third
                            sizes[seat] = 3
                            position += 3
                        record.deals += 1
                        turn = seat + 1 if seat + 1 < players else 0
                    else:
                        round_over = True
                        break
            finally:
                # Write the round back, so the game is whole whatever happened.
                self._turn = turn
                self._deck_position = position
                for seat in range(players):
                    hand = []
                    for i in range(sizes[seat]):
                        hand.append(hands[seat * 40 + i])
                    self._hands[seat] = hand
                    self._seat_captured[seat] = seat_captured[seat]
                    self._escobas[seat] = escobas[seat]
                for team in range(self._num_teams):
                    self._captured[team] = captured[team]
                table_list = []
                for i in range(size):
                    table_list.append(table[i])
                self._table = table_list
                self._table_key = table_key
                self._table_mask = table_mask
                self._last_capturer = last_capturer
            if not round_over:
                break
            self._end_round()
            if not to_game_end:
                break
        return made

    def _captures(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """The table positions each card index captures (``captures.captures_by_card``), read
        from the memo here rather than through that function: the call costs more than the
        lookup when the table's values were seen before, as they nearly always were."""
        key = self._table_key
        by_key = _BY_KEY
        by_card = by_key.get(key)
        if by_card is None:
            by_card = captures_by_card(key, self._table)
        return by_card

    def _play(self, fields: _MoveFields, seat: int) -> None:
        """Play a legal move for ``seat``, whose turn it is, and pass the turn on (or deal, or
        end the round)."""
        card = fields.card_index
        mask = fields.mask
        hand = self._hands[seat]
        table = self._table
        hand.remove(card)
        if mask:
            for taken in fields.taken:
                table.remove(taken)
            self._table_key -= fields.taken_key
            self._table_mask ^= mask
            team = self._teams[seat]
            self._captured[team] |= fields.won
            self._seat_captured[seat] += fields.size
            self._last_capturer = seat
            escoba = not table
            if escoba:
                self._escobas[seat] += 1
        else:
            insort(table, card)
            self._table_key += VALUE_KEYS[card]
            self._table_mask |= fields.bit
            escoba = False
        self._plays.append(fields.code | seat << 1 | escoba)
        seat += 1
        if seat == self._players:
            seat = 0
        if self._hands[seat]:
            self._turn = seat
        elif self._deck_position < 40:
            self._deal_hands()
        else:
            self._end_round()

    def forfeit(self, seat: int, reason: str = "faults") -> None:
        """End the game because ``seat`` broke the fault policy: its team loses.

        With two sides the other side wins; with more, the strictly highest total among the
        other sides wins, or nobody on a tie.
        """
        if self._result is not None:
            raise IllegalMoveError("game_over", "the game is already over")
        if not isinstance(seat, int) or not 0 <= seat < self._players:
            raise EscobaError(f"no seat {seat!r} in a {self._players}-player game")
        team = self._teams[seat]
        others = [t for t in range(self._num_teams) if t != team]
        winner = others[0] if len(others) == 1 else None
        if len(others) > 1:
            best = strict_winner([self._totals[t] for t in others])
            winner = None if best is None else others[best]
        self._forfeit_reason = reason
        self._finish(Result(winner, list(self._totals), "forfeit", team, seat))

    def clone(self) -> Game:
        """An independent copy; completed rounds' records are shared since they never change.

        This is what a search copies for every simulation, so every field is copied by name.
        """
        other = Game.__new__(Game)
        other.ruleset = self.ruleset
        other.seed = self.seed
        other._players = self._players
        other._teams = self._teams
        other._num_teams = self._num_teams
        other._optional = self._optional
        other._totals = list(self._totals)
        other._result = self._result
        other._forfeit_reason = self._forfeit_reason
        other._round_number = self._round_number
        other._dealer = self._dealer
        other._deck = self._deck
        other._deck_position = self._deck_position
        other._hands = [list(hand) for hand in self._hands]
        other._table = list(self._table)
        other._table_key = self._table_key
        other._table_mask = self._table_mask
        other._captured = list(self._captured)
        other._seat_captured = list(self._seat_captured)
        other._escobas = list(self._escobas)
        other._last_capturer = self._last_capturer
        other._turn = self._turn
        rounds = list(self._rounds)
        record = self._record
        if rounds and rounds[-1] is record:
            record = record.copy()
            rounds[-1] = record
        other._rounds = rounds
        other._record = record
        other._plays = record.plays
        return other

    # -- what a seat may see -------------------------------------------------------------

    def view(self, seat: int) -> GameView:
        """What ``seat`` may know: its own hand, the table and everything public."""
        if not isinstance(seat, int) or not 0 <= seat < self._players:
            raise EscobaError(f"no seat {seat!r} in a {self._players}-player game")
        seats = [
            SeatPublic(
                s, self._teams[s], len(self._hands[s]), self._seat_captured[s], self._escobas[s]
            )
            for s in range(self._players)
        ]
        history = list(map(_PLAY_VIEWS.__getitem__, self._record.plays))
        return GameView(
            seat=seat,
            team=self._teams[seat],
            hand=self.hand(seat),
            table=self.table,
            round=self._round_number,
            dealer=self._dealer,
            deck_remaining=40 - self._deck_position,
            seats=seats,
            scores=list(self._totals),
            history=history,
            legal_moves=self.legal_moves() if seat == self._turn else [],
            ruleset=self.ruleset,
            lucky_deal=lucky_deal_of(self._record.lucky),
        )

    def log(self) -> dict[str, Any]:
        """The game as an ``escoba-log/1`` document made of plain JSON types."""
        result = None
        if self._result is not None:
            result = {
                "winner": self._result.winner,
                "totals": list(self._result.totals),
                "reason": self._result.reason,
                "forfeit": self._result.forfeit,
                "forfeit_seat": self._result.forfeit_seat,
                "forfeit_reason": self._forfeit_reason,
            }
        return {
            "format": "escoba-log/1",
            "ruleset": self.ruleset.to_dict(),
            "seed": self.seed,
            "seats": [{"seat": s, "team": t} for s, t in enumerate(self._teams)],
            "rounds": [
                _round_log(record, self._players, self.ruleset.options) for record in self._rounds
            ],
            "result": result,
        }

    # -- the course of a round -----------------------------------------------------------

    def _start_round(self, number: int, dealer: int) -> None:
        players = self._players
        self._round_number = number
        self._dealer = dealer
        self._deck = round_deck(self.seed, number)
        self._hands = [[] for _ in range(players)]
        self._captured = [0] * self._num_teams
        self._seat_captured = [0] * players
        self._escobas = [0] * players
        self._last_capturer = -1
        self._record = _Round(dealer, [])
        self._record.deck = self._deck
        self._plays = self._record.plays
        self._rounds.append(self._record)
        self._deck_position = 0
        self._deal_hands()
        position = self._deck_position
        table = sorted(self._deck[position : position + TABLE_SIZE])
        self._deck_position = position + TABLE_SIZE
        self._record.table = table
        self._table = list(table)
        self._table_key = sum([VALUE_KEYS[c] for c in table])
        self._table_mask = _mask(table)
        worth = sum([VALUES[c] for c in table])
        if worth == 15 or worth == 30:
            sweeps = worth // 15
            self._record.lucky = (dealer, table, sweeps)
            self._captured[self._teams[dealer]] |= self._table_mask
            self._seat_captured[dealer] += len(table)
            self._escobas[dealer] += sweeps
            self._last_capturer = dealer
            self._table = []
            self._table_key = 0
            self._table_mask = 0

    def _deal_hands(self) -> None:
        """Three cards to each seat, starting after the dealer; the next seat starts playing."""
        deck, position, players, hands = self._deck, self._deck_position, self._players, self._hands
        seat = self._dealer
        for _ in range(players):
            seat = seat + 1 if seat + 1 < players else 0
            hands[seat] = _hand(deck, position)
            position += HAND_SIZE
        self._deck_position = position
        self._record.deals += 1
        self._turn = seat + 1 if seat + 1 < players else 0

    def _end_round(self) -> None:
        record = self._record
        taker = self._last_capturer if self._last_capturer >= 0 else self._dealer
        if self._table:
            record.leftover = (taker, list(self._table))
        self._captured[self._teams[taker]] |= self._table_mask
        self._seat_captured[taker] += len(self._table)
        self._table = []
        self._table_key = 0
        self._table_mask = 0
        escobas = [0] * self._num_teams
        for seat, count in enumerate(self._escobas):
            escobas[self._teams[seat]] += count
        # The round's score is built from these when a log asks (_round_log); playing on needs
        # only the points. _start_round gives the next round a new list of captured cards.
        record.captured = self._captured
        record.escobas = escobas
        points = round_totals(self.ruleset.options, self._captured, escobas)
        totals = [total + won for total, won in zip(self._totals, points, strict=True)]
        self._totals = totals
        record.totals = list(totals)
        result = round_outcome(self.ruleset.options, totals, self._round_number)
        if result is not None:
            return self._finish(result)
        self._start_round(self._round_number + 1, (self._dealer + 1) % self._players)

    def _finish(self, result: Result) -> None:
        self._result = result
        self._turn = -1

    def _why_illegal(self, move: Move) -> IllegalMoveError:
        if not isinstance(move, Move):
            return IllegalMoveError("not_a_move", f"{move!r} is not a Move")
        if self._turn < 0:
            return IllegalMoveError("game_over", "the game is over")
        if move.card_index not in self._hands[self._turn]:
            return IllegalMoveError(
                "card_not_in_hand", f"{move.card} is not in seat {self._turn}'s hand"
            )
        missing = move.mask & ~self._table_mask
        if missing:
            names = "+".join(str(c) for c in cards_of_mask(missing))
            return IllegalMoveError("cards_not_on_table", f"{names} not on the table")
        if move.mask:
            return IllegalMoveError("sum_not_15", f"{move} adds up to {move.total}, not 15")
        return IllegalMoveError("must_capture", f"{move.card} can make 15, so it must capture")


def _search_sums(table: Any, size: int, need: int, chosen: int, out: Any) -> int:
    """Search the sets of cards of the sorted ``table`` (C arrays, compiled build only) whose
    values add up to 14 or less, in the canonical order of captures (the order of
    ``captures._extend``, without recursion).

    With ``need`` 0 it adds to ``out[s]`` how many sets add up to ``s``, for every ``s``: how
    many captures each hand card has is then one read. Otherwise it puts in ``out`` the table
    positions of the ``chosen``-th (from 0) set adding up to ``need`` and returns its size.
    """
    stack = cython.declare(cython.int[40])
    limit = need if need else 14
    depth = 0
    total = 0
    position = 0
    while True:
        if position < size:
            value = (table[position] >> 2) + 1
            if total + value <= limit:
                stack[depth] = position
                depth += 1
                total += value
                if not need:
                    out[total] += 1
                elif total == need:
                    if chosen == 0:
                        for index in range(depth):
                            out[index] = stack[index]
                        return depth
                    chosen -= 1
                position += 1
                continue
        if depth == 0:
            return 0
        depth -= 1
        position = stack[depth]
        total -= (table[position] >> 2) + 1
        position += 1


def _in_order(first: int, second: int, third: int) -> tuple[int, int, int]:
    """Three cards sorted: three compares cost far less than sorted()."""
    if first > second:
        first, second = second, first
    if second > third:
        second, third = third, second
        if first > second:
            first, second = second, first
    return first, second, third


def _hand(deck: list[int], position: int) -> list[int]:
    """The 3 cards dealt from ``position``, sorted."""
    first, second, third = _in_order(deck[position], deck[position + 1], deck[position + 2])
    return [first, second, third]


def _mask(cards: list[int]) -> int:
    mask = 0
    for card in cards:
        mask |= BITS[card]
    return mask


def _names(cards: list[int]) -> list[str]:
    return [NAMES[c] for c in cards]


def _deals_log(record: _Round, players: int) -> list[list[list[str]]]:
    """The cards of each deal by seat, read back from the round's deck in dealing order: the
    first deal comes off the top, then the 4 table cards, then the later deals."""
    order = [(record.dealer + 1 + step) % players for step in range(players)]
    deck = record.deck
    names = NAMES
    deals = []
    position = 0
    for _ in range(record.deals):
        deal: list[list[str]] = [[]] * players
        for seat in order:
            first, second, third = _hand(deck, position)
            deal[seat] = [names[first], names[second], names[third]]
            position += HAND_SIZE
        if position == HAND_SIZE * players:
            position += TABLE_SIZE
        deals.append(deal)
    return deals


def _plays_log(plays: list[int]) -> list[dict[str, Any]]:
    """A round's plays as the log shows them, decoded from their codes (see decode_play)."""
    moves = _MOVES
    logged = []
    for code in plays:
        move = moves.get(code >> 3)
        if move is None:
            move = _move_of(code >> 3)
        card, capture = move.wire
        logged.append(
            {"seat": code >> 1 & 3, "card": card, "capture": [*capture], "escoba": code & 1 == 1}
        )
    return logged


def _round_log(record: _Round, players: int, options: Any) -> dict[str, Any]:
    """A round as the log shows it. The round's score (its counts, points by category and what
    decided each point) is built here, the first time a log asks for the round, rather than when
    the round ends: a game or a search that plays rounds out to their end needs only the totals.
    Two threads logging games that share the record may both build it; each stores a finished
    score, equal to the other's, and logs its own."""
    score = record.score
    if score is None and record.captured is not None:
        score = score_round(options, record.captured, record.escobas)
        add_score_breakdown(options, record.captured, score)
        record.score = score
    lucky = None
    if record.lucky is not None:
        seat, cards, sweeps = record.lucky
        lucky = {"seat": seat, "cards": _names(cards), "escobas": sweeps}
    leftover = None
    if record.leftover is not None:
        leftover = {"seat": record.leftover[0], "cards": _names(record.leftover[1])}
    return {
        "dealer": record.dealer,
        "table": _names(record.table),
        "lucky_deal": lucky,
        "deals": _deals_log(record, players),
        "plays": _plays_log(record.plays),
        "leftover": leftover,
        "score": score_log(score) if score is not None else None,
        "totals": list(record.totals) if record.totals is not None else None,
    }
