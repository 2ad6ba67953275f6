"""Who plays whom, in which seats, with which deals: pure functions, no database.

A league is cut into matches. A match is one set: the games of a pairing (or of a 3-bot table)
with the seats, and so the dealer, rotated. ``games_per_pairing`` is a multiple of the set's
length; each further set gets a seed of its own (``match_seed``).

Which deals a set's games get (``set_seeds``):

- **fresh deals** (``shared=False``), every game its own seed (``game_seed``): a bot remembers
  everything it was ever sent, so a deal played twice, by two owners' bots or by one bot in both
  seats, is a deal a bot knows (the opponent's hand, the next round's cards). Rated play and
  every set between two owners' bots use fresh deals; the luck they leave in is taken out by the
  baseline correction (``games.ratings.baseline``, docs/ratings.md).
- **duplicate deals** (``shared=True``), one seed for the whole set: whatever luck one bot had
  with a deal its opponent gets in the other seat, so the luck cancels within the set. Only where
  nobody can learn from it what they could not know anyway (``deals_shared``): an unrated set
  whose bots all belong to one owner, who could pool their memories in any case.

Seatings are tuples of participants indexed by seat (seats 0 and 2 are team 0, seats 1 and 3
team 1). In a user's unrated partnership league a bot fields both seats of its team (a
shared-hand team, which sees both hands); rated partnership play seats four different bots with
rotating partners (``build_individual_schedule``).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

TABLE_SIZES = (2, 3, 4)
MAX_SEED = 2**63 - 1

ERROR_TABLE_SIZE = "players must be 2, 3 or 4 (4 = two partnerships)."
ERROR_TOO_FEW_BOTS = "A league needs at least {minimum} different bots for {players}-player games."
ERROR_DUPLICATE_BOTS = "A bot may be entered only once."
ERROR_GAMES_PER_PAIRING = (
    "games_per_pairing must be a positive multiple of {length} for {players}-player games, "
    "so that every bot meets every deal from every seat."
)


@dataclass(frozen=True)
class ScheduledMatch:
    """One set: ``games`` are seatings, ``seeds`` their deals (one per game, see ``set_seeds``);
    ``seed`` is the set's own, from which fresh deals are drawn."""

    number: int
    round: int
    participants: tuple
    seed: int
    games: tuple[tuple, ...]
    seeds: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.seeds:  # duplicate deals unless said otherwise
            object.__setattr__(self, "seeds", (self.seed,) * len(self.games))
        if len(self.seeds) != len(self.games):
            raise ValueError("a set needs one seed per game")

    @property
    def shared(self) -> bool:
        """Whether the set's games share one deal (a duplicate set)."""
        return len(set(self.seeds)) == 1 and len(self.seeds) > 1


def set_length(players: int) -> int:
    """How many games make one duplicate set: one per seat of the rotation."""
    if players not in TABLE_SIZES:
        raise ValueError(ERROR_TABLE_SIZE)
    return 3 if players == 3 else 2


def table_options(players: int) -> dict[str, int | bool]:
    """The ruleset options a league's table size sets: four players are two partnerships."""
    return {"players": players, "teams": players == 4}


def minimum_bots(players: int) -> int:
    """Partnership leagues seat two bots (one per team); the others one bot per seat."""
    return 2 if players == 4 else players


def schedule_errors(*, bot_count: int, players: int, games_per_pairing: int) -> dict[str, str]:
    """Field → message for every reason these settings cannot be scheduled (empty when fine)."""
    if players not in TABLE_SIZES:
        return {"players": ERROR_TABLE_SIZE}
    errors = {}
    length = set_length(players)
    if games_per_pairing < 1 or games_per_pairing % length:
        errors["games_per_pairing"] = ERROR_GAMES_PER_PAIRING.format(length=length, players=players)
    if bot_count < minimum_bots(players):
        errors["bots"] = ERROR_TOO_FEW_BOTS.format(minimum=minimum_bots(players), players=players)
    return errors


def circle_rounds(entrants: Sequence[T]) -> list[list[tuple[T, T]]]:
    """A full round robin by the circle method: every entrant meets every other once.

    The first entrant stays put while the others turn around it; with an odd number one slot is
    a bye. Home and away alternate for the fixed entrant so no one always sits first.
    """
    slots: list[T | None] = list(entrants)
    if len(slots) % 2:
        slots.append(None)
    count = len(slots)
    rounds = []
    for number in range(count - 1):
        pairs = []
        for i in range(count // 2):
            a, b = slots[i], slots[count - 1 - i]
            if a is None or b is None:
                continue
            if i == 0 and number % 2:
                a, b = b, a
            pairs.append((a, b))
        rounds.append(pairs)
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return rounds


def table_rounds(entrants: Sequence[T], size: int = 3) -> list[list[tuple[T, ...]]]:
    """Every ``size``-entrant table once, packed greedily into rounds where nobody plays twice."""
    return pack_rounds(list(itertools.combinations(entrants, size)))


def pack_rounds(tables: Sequence[tuple[T, ...]]) -> list[list[tuple[T, ...]]]:
    """``tables`` in their order, packed greedily into rounds where nobody plays twice."""
    remaining = list(tables)
    rounds = []
    while remaining:
        busy: set[T] = set()
        this_round, later = [], []
        for table in remaining:
            if busy.isdisjoint(table):
                this_round.append(table)
                busy.update(table)
            else:
                later.append(table)
        rounds.append(this_round)
        remaining = later
    return rounds


def duplicate_seatings(participants: Sequence[T], players: int, set_index: int = 0) -> list[tuple]:
    """The seatings of one set: every bot in every seat (on one deal or on fresh ones).

    Two players swap seats. Three players rotate through all three seats; odd-numbered sets
    reverse the order of play, so over two sets each bot also plays both before and after each
    opponent. Partnerships swap which team (seats 0 and 2, or 1 and 3) each bot fields.
    """
    if players == 2:
        a, b = participants
        return [(a, b), (b, a)]
    if players == 3:
        order = list(participants)
        if set_index % 2:
            order = [order[0], order[2], order[1]]
        return [tuple(order[i:] + order[:i]) for i in range(3)]
    if players == 4:
        a, b = participants
        return [(a, b, a, b), (b, a, b, a)]
    raise ValueError(ERROR_TABLE_SIZE)


def match_seed(league_seed: int, number: int) -> int:
    """A stable seed per match: the same league replays the same deals, different matches differ."""
    digest = hashlib.blake2b(f"{league_seed}:{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & MAX_SEED


def game_seed(set_seed: int, game_number: int) -> int:
    """A fresh deal for game ``game_number`` (from 1) of a set: stable, and unlike every other
    game's (a 63-bit hash, so two games share a deal with odds of about 2**-63)."""
    digest = hashlib.blake2b(f"{set_seed}/game/{game_number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & MAX_SEED


def set_seeds(set_seed: int, games: int, *, shared: bool) -> tuple[int, ...]:
    """Each game's seed in a set of ``games`` games: all ``set_seed`` for duplicate deals,
    otherwise a fresh deal per game (see the module docstring)."""
    if shared:
        return (set_seed,) * games
    return tuple(game_seed(set_seed, n) for n in range(1, games + 1))


def deals_shared(*, rated: bool, owners: Iterable[Hashable]) -> bool:
    """Whether a set may be played on duplicate deals: only an unrated set whose bots all have
    one owner. A shared deal must never reach two owners' bots (each would learn the other's
    hand), and rated play never repeats a deal for anyone (a rating must not reward memory)."""
    return not rated and len(set(owners)) == 1


def build_schedule(
    entrants: Sequence[T],
    *,
    players: int,
    games_per_pairing: int,
    seed: int,
    shared: Callable[[tuple], bool] | bool = True,
) -> list[ScheduledMatch]:
    """Every match of a league, in play order: round by round, set by set.

    ``shared`` says whether a set's games share one deal: a bool for every set, or a function of
    the set's participants (the service's ``deals_shared`` for their owners)."""
    errors = schedule_errors(
        bot_count=len(set(entrants)), players=players, games_per_pairing=games_per_pairing
    )
    if len(set(entrants)) != len(entrants):
        errors["bots"] = ERROR_DUPLICATE_BOTS
    if errors:
        raise ValueError("; ".join(errors.values()))
    rounds = table_rounds(entrants, 3) if players == 3 else circle_rounds(entrants)
    sets = games_per_pairing // set_length(players)
    matches = []
    for round_number, tables in enumerate(rounds, start=1):
        for set_index in range(sets):
            for table in tables:
                number = len(matches) + 1
                seatings = tuple(duplicate_seatings(table, players, set_index))
                own = match_seed(seed, number)
                same = shared(tuple(table)) if callable(shared) else shared
                matches.append(
                    ScheduledMatch(
                        number=number,
                        round=round_number,
                        participants=tuple(table),
                        seed=own,
                        games=seatings,
                        seeds=set_seeds(own, len(seatings), shared=same),
                    )
                )
    return matches


def schedule_games(*, bot_count: int, players: int, games_per_pairing: int) -> int:
    """How many games ``build_schedule`` writes for this many bots, without building it: every
    pairing (every 3-bot table) plays ``games_per_pairing`` games. For the limits a league is
    checked against before its schedule is written."""
    if players not in TABLE_SIZES:
        raise ValueError(ERROR_TABLE_SIZE)
    return math.comb(bot_count, 3 if players == 3 else 2) * games_per_pairing


# -- individual partnerships: each seat its own bot, partners rotating ---------------------------
#
# In rated partnership play no bot fields two seats: it would see its partner's hand, which the
# rules forbid. Four different bots sit at a table and the partnerships rotate through the three
# ways of pairing them, as a bridge individual does, so each bot partners each other once and
# opposes each other twice; each bot is rated on its own from the games it played against each
# opponent (``games.ratings.sets.set_pair_scores`` counts a pair only where they were opponents).

INDIVIDUAL_TABLE = 4
ERROR_TOO_FEW_OWNERS = (
    "Rated partnership play seats four bots of four different owners at every table: "
    "enter bots of at least four owners."
)


def individual_seatings(table: Sequence[T]) -> list[tuple]:
    """The three games of a table of four different bots ``a, b, c, d``, one per way of pairing
    them (seats 0 and 2 are team 0, seats 1 and 3 team 1): ``a & c`` against ``b & d``,
    ``a & b`` against ``c & d``, ``a & d`` against ``b & c``."""
    if len(table) != INDIVIDUAL_TABLE or len(set(table)) != INDIVIDUAL_TABLE:
        raise ValueError("an individual partnership table is four different bots")
    a, b, c, d = table
    return [(a, b, c, d), (a, c, b, d), (a, b, d, c)]


def individual_tables(entrants: Sequence[T], owner_of: dict[T, Hashable]) -> list[tuple[T, ...]]:
    """Every table of four entrants whose owners all differ (no table holds two bots of one
    owner), in a stable order."""
    return [
        table
        for table in itertools.combinations(entrants, INDIVIDUAL_TABLE)
        if len({owner_of[bot] for bot in table}) == INDIVIDUAL_TABLE
    ]


def build_individual_schedule(
    entrants: Sequence[T], *, owner_of: dict[T, Hashable], sets: int, seed: int
) -> list[ScheduledMatch]:
    """A rated partnership league: every table of ``individual_tables``, ``sets`` times each,
    packed into rounds where nobody plays twice; each set is the table's three games
    (``individual_seatings``). ``ValueError`` when no table can be made."""
    tables = individual_tables(entrants, owner_of)
    if not tables:
        raise ValueError(ERROR_TOO_FEW_OWNERS)
    matches = []
    for round_number, round_tables in enumerate(pack_rounds(tables), start=1):
        for _ in range(sets):
            for table in round_tables:
                number = len(matches) + 1
                matches.append(
                    ScheduledMatch(
                        number=number,
                        round=round_number,
                        participants=tuple(table),
                        seed=match_seed(seed, number),
                        games=tuple(individual_seatings(table)),
                        # Rated play: every game its own deal (``deals_shared``).
                        seeds=set_seeds(match_seed(seed, number), 3, shared=False),
                    )
                )
    return matches
