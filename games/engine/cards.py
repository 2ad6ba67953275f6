"""The 40-card Spanish deck.

Every card exists exactly once as a ``Card`` object (they are interned), so cards compare by
identity and the engine can work on their small integer ``index`` internally. The canonical order
is by capture value, then by suit in the order oros, copas, espadas, bastos:
``1o 1c 1e 1b 2o ... 10b``; ``index`` is the position in that order.
"""

from __future__ import annotations

from .errors import InvalidCardError

SUITS = "oceb"
SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
# The face cards' names (their capture values): what players call them, the pages too.
FACE_NAMES = {8: "sota", 9: "caballo", 10: "rey"}
FRENCH_SUITS = {"o": "\u2666", "c": "\u2665", "e": "\u2660", "b": "\u2663"}
FRENCH_RANKS = {1: "A", 8: "J", 9: "Q", 10: "K"}


class Card:
    """One card of the Spanish deck; immutable and unique, get one with ``Card.from_str``."""

    __slots__ = ("index", "value", "suit", "_text")

    index: int
    value: int
    suit: str

    def __init__(self, index: int) -> None:
        # Only called while building ALL_CARDS below; everyone else reuses those objects.
        value, suit = index // 4 + 1, SUITS[index % 4]
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "suit", suit)
        object.__setattr__(self, "_text", f"{value}{suit}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    @staticmethod
    def from_str(text: str) -> Card:
        """Parse the canonical form, e.g. ``"7o"``; anything else raises ``InvalidCardError``."""
        card = _BY_TEXT.get(text) if isinstance(text, str) else None
        if card is None:
            raise InvalidCardError(f"not a card: {text!r} (expected e.g. '7o', '10b')")
        return card

    @staticmethod
    def of(value: int, suit: str) -> Card:
        """The card with this capture value (1-10) and suit letter."""
        return Card.from_str(f"{value}{suit}")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card({self._text!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.from_str, (self._text,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


ALL_CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(40))
_BY_TEXT = {str(card): card for card in ALL_CARDS}

# Per-index lookups used on the engine's hot path.
VALUES: tuple[int, ...] = tuple(card.value for card in ALL_CARDS)
NAMES: tuple[str, ...] = tuple(str(card) for card in ALL_CARDS)
BITS: tuple[int, ...] = tuple(1 << i for i in range(40))
# A multiset of card values is keyed by the base-5 number whose digit v-1 counts the value v.
VALUE_KEYS: tuple[int, ...] = tuple(5 ** (value - 1) for value in VALUES)
OROS_MASK = sum(1 << c.index for c in ALL_CARDS if c.suit == "o")
SEVENS_MASK = sum(1 << c.index for c in ALL_CARDS if c.value == 7)
SEVEN_OF_OROS = Card.from_str("7o").index
SUIT_MASKS: tuple[int, ...] = tuple(
    sum(1 << c.index for c in ALL_CARDS if c.suit == s) for s in SUITS
)


def cards_of_mask(mask: int) -> list[Card]:
    """The cards whose bits are set, in canonical order."""
    return [card for card in ALL_CARDS if mask >> card.index & 1]


def french_label(card: Card) -> str:
    """How the browser shows a card with a French deck (documents A and C): ``"7♦"``, ``"K♣"``."""
    return FRENCH_RANKS.get(card.value, str(card.value)) + FRENCH_SUITS[card.suit]
