"""Who plays whom next on the ladder: pure functions and data, no database, no global random.

The ladder keeps a number of duplicate sets in flight per pool; whenever it has room it asks a
``Matchmaker`` for the next table. Each decision is two steps:

1. **The bot most in need of games**, from a priority heap: a bot whose current version has no
   set yet first, then the widest rating interval (in buckets of ``WIDTH_BUCKET`` Elo, so that
   small differences do not decide alone), then the fewest recent sets, then the fewest sets in
   flight; the bot id breaks ties. A bot leaves the heap when it is in ``max_sets_per_bot`` sets.
2. **An opponent near its rating, with a heavy tail**: a rating distance is drawn from a Cauchy
   distribution (scale ``spread``; about one draw in six lands more than four scales away), and
   the eligible bot nearest that target is taken, walking outwards from its place (bisect) in the
   rating-sorted list. So close opponents are the rule, and far-apart bots still meet sometimes,
   which is what ties the rating list together.

Rules a table always obeys:

- no bot in more than ``max_sets_per_bot`` sets at once;
- no two bots of the same owner (``owner`` None marks a house bot, owned by nobody who can
  sign in: it counts as its own owner);
- no pair repeats while others wait: a bot's opponents of its last ``repeat_window`` sets (those
  in flight included) are taken only when no other eligible opponent exists, and then the one it
  met longest ago.

Cost: building is O(n log n) (one sort, one heapify); each decision is O(log n) for the heap,
plus a walk that stops at the first eligible bot: O(1) in the common case, O(n) at worst (when
almost everyone is busy, of the same owner or met recently). ``benchmarks/matchmaking.py``
measures it at 1,000 bots.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WIDTH_BUCKET = 50.0
DEFAULT_SPREAD = 100.0
DEFAULT_REPEAT_WINDOW = 4
# How many of its latest sets per bot the matchmaker is handed: twice what the repeat rule looks
# back; older meetings would only order "met longest ago", and reading them costs build time.
HISTORY_PER_BOT = 2 * DEFAULT_REPEAT_WINDOW


@dataclass(frozen=True)
class Entrant:
    """A bot the ladder may schedule now, with what the matchmaker weighs."""

    bot: int
    owner: int | None
    rating: float
    width: float = math.inf  # its rating's 95 % interval, high minus low; inf when unrated
    new: bool = False  # its current version has not played a set yet
    recent_sets: int = 0
    in_flight: int = 0


@dataclass(frozen=True)
class Rules:
    max_sets_per_bot: int = 2
    table: int = 2  # bots per set: 2 (duels), 3, or 4 (partnerships, partners rotating)
    spread: float = DEFAULT_SPREAD
    repeat_window: int = DEFAULT_REPEAT_WINDOW


class _State:
    __slots__ = ("entrant", "in_flight", "recent_sets", "opponents", "stamp")

    def __init__(self, entrant: Entrant, window: int) -> None:
        self.entrant = entrant
        self.in_flight = entrant.in_flight
        self.recent_sets = entrant.recent_sets
        # The opponents of its last sets, most recent last (a set of three has two).
        self.opponents: deque[frozenset[int]] = deque(maxlen=window)
        self.stamp = 0

    def met_recently(self, other: int) -> bool:
        return any(other in table for table in self.opponents)


class Matchmaker:
    """Tables for one pool, one decision at a time (see the module docstring).

    ``history``: the pool's sets, oldest first, each the tuple of its bots; those in flight come
    last. Only the recent past matters: pass what the ``repeat_window`` and the "met longest ago"
    fallback should see (the service passes the last few hundred sets per bot at most).
    """

    def __init__(
        self,
        entrants: Iterable[Entrant],
        *,
        rules: Rules,
        history: Iterable[Sequence[int]] = (),
        rng: random.Random,
    ) -> None:
        self.rules = rules
        self.rng = rng
        self._states = {e.bot: _State(e, rules.repeat_window) for e in entrants}
        self._last_met: dict[tuple[int, int], int] = {}
        self._clock = 0
        for table in history:
            self._record(tuple(table), count=False)
        order = sorted(self._states.values(), key=lambda s: (s.entrant.rating, s.entrant.bot))
        self._ratings = [s.entrant.rating for s in order]
        self._bots = [s.entrant.bot for s in order]
        self._heap = [self._key(s) for s in self._states.values() if self._has_room(s)]
        heapq.heapify(self._heap)

    # -- bookkeeping ---------------------------------------------------------------------------

    def _key(self, state: _State) -> tuple:
        entrant = state.entrant
        width = entrant.width if math.isfinite(entrant.width) else 1e9
        return (
            0 if entrant.new else 1,
            -math.floor(width / WIDTH_BUCKET),
            state.recent_sets,
            state.in_flight,
            entrant.bot,
            state.stamp,
        )

    def _has_room(self, state: _State) -> bool:
        return state.in_flight < self.rules.max_sets_per_bot

    def _record(self, table: tuple[int, ...], *, count: bool) -> None:
        """Note a set among ``table`` (from history, or just decided when ``count``)."""
        self._clock += 1
        for bot in table:
            state = self._states.get(bot)
            others = frozenset(b for b in table if b != bot)
            for other in others:
                self._last_met[(bot, other)] = self._clock
            if state is None:
                continue
            state.opponents.append(others)
            if count:
                state.in_flight += 1
                state.recent_sets += 1
                state.stamp += 1
                if self._has_room(state):
                    heapq.heappush(self._heap, self._key(state))

    def _owner(self, bot: int) -> object:
        owner = self._states[bot].entrant.owner
        return ("house", bot) if owner is None else owner

    # -- decisions -----------------------------------------------------------------------------

    def _eligible(self, candidate: int, table: list[int]) -> bool:
        state = self._states[candidate]
        if candidate in table or not self._has_room(state):
            return False
        owner = self._owner(candidate)
        return all(self._owner(bot) != owner for bot in table)

    def _fresh(self, candidate: int, table: list[int]) -> bool:
        state = self._states[candidate]
        return not any(
            state.met_recently(bot) or self._states[bot].met_recently(candidate) for bot in table
        )

    def _target(self, rating: float) -> float:
        """A rating to look near: ``rating`` plus a Cauchy-distributed distance."""
        return rating + self.rules.spread * math.tan(math.pi * (self.rng.random() - 0.5))

    def _opponent(self, anchor: int, table: list[int]) -> int | None:
        """The eligible bot nearest a heavy-tailed target around ``anchor``'s rating, preferring
        one not met recently; None when nobody is eligible."""
        target = self._target(self._states[anchor].entrant.rating)
        ratings, bots = self._ratings, self._bots
        high = bisect.bisect_left(ratings, target)
        low = high - 1
        stale: list[int] = []
        while low >= 0 or high < len(bots):
            if high >= len(bots) or (low >= 0 and target - ratings[low] <= ratings[high] - target):
                candidate, low = bots[low], low - 1
            else:
                candidate, high = bots[high], high + 1
            if not self._eligible(candidate, table):
                continue
            if self._fresh(candidate, table):
                return candidate
            stale.append(candidate)
        if not stale:
            return None
        # Everyone eligible was met recently: the one met longest ago.
        return min(
            stale,
            key=lambda c: (max(self._last_met.get((c, bot), 0) for bot in table), c),
        )

    def next_table(self) -> tuple[int, ...] | None:
        """The next set to schedule, its bots in the order chosen; None when no table can be made.

        A bot for which no table can be made now is set aside until the next ``Matchmaker``.
        """
        while self._heap:
            key = heapq.heappop(self._heap)
            bot, stamp = key[-2], key[-1]
            state = self._states[bot]
            if stamp != state.stamp or not self._has_room(state):
                continue  # an outdated entry: the bot was re-queued with a newer key
            table = [bot]
            while len(table) < self.rules.table:
                opponent = self._opponent(bot, table)
                if opponent is None:
                    break
                table.append(opponent)
            if len(table) < self.rules.table:
                continue
            self._record(tuple(table), count=True)
            return tuple(table)
        return None

    def tables(self, count: int) -> list[tuple[int, ...]]:
        """Up to ``count`` tables, decided one after another."""
        made = []
        while len(made) < count:
            table = self.next_table()
            if table is None:
                break
            made.append(table)
        return made
