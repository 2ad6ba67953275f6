"""Moves: a card from the hand plus the table cards it captures (none for a trail).

Moves are interned like cards: ``Move(card, capture)`` always returns the same object for the
same card and set of captured cards, so comparing moves is an identity check and the engine does
not build new objects on every turn. The cache is never cleared (that would break identity); it
is bounded because only 84,448 captures (and 40 trails) exist in the whole deck.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .cards import ALL_CARDS, BITS, NAMES, VALUE_KEYS, VALUES, Card
from .errors import InvalidCardError, InvalidMoveError

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from . import _nocython as cython  # type: ignore[no-redef]

_CACHE: dict[int, Move] = {}


# Moves live as long as the process and hold only cards, tuples and strings, so they can never
# be part of a reference cycle: in the compiled build they stay out of the garbage collector,
# which saves every full collection a walk over the tens of thousands a long run interns.
@cython.no_gc
@cython.cclass
class _MoveFields:
    """What a move holds. The compiled build (``moves.pxd``) makes these C struct fields, so the
    game reads a move's mask and counts without a Python attribute lookup; ``Move`` adds the
    interning constructor on top, which an extension type cannot have."""

    __slots__ = (
        "card",
        "capture",
        "mask",
        "total",
        "card_index",
        "bit",
        "taken",
        "taken_key",
        "won",
        "size",
        "wire",
        "code",
        "_text",
    )

    card: Card
    capture: tuple[Card, ...]
    mask: int
    total: int
    card_index: int
    bit: int
    taken: tuple[int, ...]
    taken_key: int
    won: int
    size: int
    wire: tuple[str, tuple[str, ...]]
    code: int


class Move(_MoveFields):
    """Play ``card``; take ``capture`` (canonical order, ``()`` for a trail) from the table."""

    __slots__ = ()

    def __new__(cls, card: Card, capture: Iterable[Card] = ()) -> Move:
        if not isinstance(card, Card):
            raise InvalidMoveError(f"not a card: {card!r}")
        mask = 0
        count = 0
        for taken in capture:
            if not isinstance(taken, Card):
                raise InvalidMoveError(f"not a card: {taken!r}")
            mask |= BITS[taken.index]
            count += 1
        if count != mask.bit_count():
            raise InvalidMoveError("a card appears twice in the capture")
        if mask & BITS[card.index]:
            raise InvalidMoveError("the played card cannot also be captured")
        return _interned(card.index, mask)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("moves are immutable")

    @property
    def is_trail(self) -> bool:
        return not self.mask

    @staticmethod
    def from_str(text: str) -> Move:
        """Parse ``"7o:3c+5e"`` (a capture) or ``"4b"`` (a trail)."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"not a move: {text!r}")
        card_text, sep, capture_text = text.partition(":")
        try:
            card = Card.from_str(card_text)
            capture = [Card.from_str(part) for part in capture_text.split("+")] if sep else []
        except InvalidCardError as error:
            raise InvalidMoveError(f"not a move: {text!r} ({error})") from None
        return Move(card, capture)

    @staticmethod
    def from_wire(data: Mapping[str, object]) -> Move:
        """Parse ``{"card": "7o", "capture": ["3c", "5e"]}``; ``capture`` may be absent or empty."""
        if not isinstance(data, Mapping):
            raise InvalidMoveError("a move must be an object with 'card' and 'capture'")
        extra = set(data) - {"card", "capture"}
        if extra:
            raise InvalidMoveError(f"unknown move fields: {', '.join(sorted(map(str, extra)))}")
        capture = data.get("capture")
        if capture is None:
            capture = []
        if not isinstance(capture, list):
            raise InvalidMoveError("'capture' must be a list of cards")
        try:
            card = Card.from_str(data.get("card"))  # type: ignore[arg-type]
            taken = [Card.from_str(text) for text in capture]
        except InvalidCardError as error:
            raise InvalidMoveError(str(error)) from None
        return Move(card, taken)

    def to_str(self) -> str:
        return self._text

    def to_wire(self) -> dict[str, object]:
        return {"card": self.wire[0], "capture": list(self.wire[1])}

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Move({self._text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Move.from_str, (self._text,))

    def __copy__(self) -> Move:
        return self

    def __deepcopy__(self, memo: object) -> Move:
        return self


def _interned(card_index: int, mask: int) -> Move:
    """The one Move for this card index and capture bit mask (built on first use)."""
    key = mask << 6 | card_index
    move = _CACHE.get(key)
    if move is None:
        taken = []
        rest = mask
        while rest:
            lowest = rest & -rest
            taken.append(lowest.bit_length() - 1)
            rest ^= lowest
        card = ALL_CARDS[card_index]
        capture = tuple([ALL_CARDS[index] for index in taken])
        names = tuple([NAMES[index] for index in taken])
        move = _MoveFields.__new__(Move)
        set_field = object.__setattr__
        set_field(move, "card", card)
        set_field(move, "capture", capture)
        set_field(move, "mask", mask)
        set_field(move, "card_index", card_index)
        set_field(move, "bit", BITS[card_index])
        set_field(move, "total", card.value + sum([VALUES[index] for index in taken]))
        # Engine internals: the captured card indices and their value-count key (see captures),
        # the cards that go to the capturer's pile and how many, the wire strings, and the play
        # code: a game records a play as one int, ``code | seat << 1 | escoba``
        # (state.decode_play).
        set_field(move, "taken", tuple(taken))
        set_field(move, "taken_key", sum([VALUE_KEYS[index] for index in taken]))
        set_field(move, "won", mask | BITS[card_index] if mask else 0)
        set_field(move, "size", len(taken) + 1 if mask else 0)
        set_field(move, "wire", (NAMES[card_index], names))
        set_field(move, "code", key << 3)
        set_field(move, "_text", NAMES[card_index] + (":" + "+".join(names) if names else ""))
        _CACHE[key] = move
    return move
