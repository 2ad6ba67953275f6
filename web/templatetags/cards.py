"""The {% card %} tag: one card face, the same markup the replay viewer's script builds.

Both decks are in the markup; the page's ``deck-french`` class decides which one shows, so
switching decks needs no round trip.
"""

from functools import cache

from django import template
from django.utils.html import format_html

from games.engine import ALL_CARDS, Card, french_label
from games.engine.cards import FACE_NAMES, SUIT_NAMES

register = template.Library()


def card_name(card: Card) -> str:
    """The card's Spanish name for screen readers and tooltips: ``"sota (8) of copas"``."""
    suit = SUIT_NAMES[card.suit]
    face = FACE_NAMES.get(card.value)
    return f"{face} ({card.value}) of {suit}" if face else f"{card.value} of {suit}"


@register.simple_tag
def card(text: str, extra_class: str = "") -> str:
    """Render the card written ``text`` ("7o") as a small accessible face."""
    return _card_markup(text, extra_class)


@cache
def _card_markup(text: str, extra_class: str) -> str:
    """The markup of one card, made once per card and class: a replay page draws ten cards or
    more, and building a face (ten escaped parts) took ~40 µs each. Only a card that exists is
    kept (``Card.from_str`` raises on any other text), so the cache holds at most 40 per class."""
    value = Card.from_str(text)
    french = french_label(value)
    name = card_name(value)
    classes = f"card s-{value.suit} {extra_class}".strip()
    return format_html(
        '<span class="{}" data-card="{}" role="img" aria-label="{}, {}" title="{} · {}">'
        '<span class="rank spanish-rank" aria-hidden="true">{}</span>'
        '<svg class="pip" aria-hidden="true"><use href="#suit-{}"></use></svg>'
        '<span class="french" aria-hidden="true">{}</span>'
        '<span class="name" aria-hidden="true">{}</span></span>',
        classes,
        text,
        name,
        french,
        name,
        french,
        value.value,
        value.suit,
        french,
        FACE_NAMES.get(value.value, SUIT_NAMES[value.suit]),
    )


@register.simple_tag
def card_words() -> dict[str, dict]:
    """The engine's names of the suits (in its order) and of the face cards, for the viewer's
    script (`{% card_words as words %}{{ words|json_data:"card-words" }}`)."""
    return {"suits": SUIT_NAMES, "faces": FACE_NAMES}


def french_labels() -> dict[str, str]:
    """Every card's French label, so the viewer's script shares the engine's one mapping."""
    return {str(c): french_label(c) for c in ALL_CARDS}
