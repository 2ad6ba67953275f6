"""Finding captures: which table cards add up to 15 with a played card.

This is the engine's hot spot. Tables differ card by card but their *values* repeat a lot, so
the subset search runs once per multiset of table values and is memoised on a small integer key
(base 5, one digit per value: ``cards.VALUE_KEYS``) that the game keeps up to date as cards come
and go. The answer is a list of positions in the sorted table, which the game maps to cards.
"""

from __future__ import annotations

from typing import Any

from .cards import VALUES

_LIMIT = 200_000
_by_key: dict[int, tuple[tuple[tuple[int, ...], ...], ...]] = {}


def combinations_by_need(values: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For sorted table ``values``, entry ``need`` lists the position tuples summing to ``need``.

    Positions come out in lexicographic order, which is the canonical order of the captures
    because the table is kept in canonical card order (by value first).
    """
    found: list[list[tuple[int, ...]]] = [[] for _ in range(15)]
    _extend(values, 0, 0, [], found)
    return tuple([tuple(entry) for entry in found])


def _extend(
    values: tuple[int, ...], start: int, total: int, chosen: list[int], found: list[list[Any]]
) -> None:
    """Add every way to extend ``chosen`` (positions summing to ``total``) with later positions
    while the sum stays below 15; a plain recursive function, which the compiled build can have
    where it cannot have a closure."""
    for position in range(start, len(values)):
        reached = total + values[position]
        if reached > 14:
            break
        chosen.append(position)
        found[reached].append(tuple(chosen))
        _extend(values, position + 1, reached, chosen, found)
        chosen.pop()


def captures_by_card(key: int, table: list[int]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Entry ``c`` lists the table positions that card index ``c`` captures (sorted ``table``).

    ``key`` is the table's value-count key; it must describe ``table``.
    """
    entry = _by_key.get(key)
    if entry is None:
        found = combinations_by_need(tuple([VALUES[c] for c in table]))
        entry = tuple([found[15 - value] for value in VALUES])
        if len(_by_key) >= _LIMIT:
            _by_key.clear()
        _by_key[key] = entry
    return entry
