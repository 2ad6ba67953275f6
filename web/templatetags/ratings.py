"""A published rating as pages show it: "1523 ± 41", and "?" when provisional.

One tag for the rankings and the bot page, so both say the same thing the same way: the figure,
its 95 % interval, and the provisional mark, each with words a screen reader reads out (the
glyphs "±" and "?" alone say little).
"""

from typing import Any

from django import template
from django.utils.html import format_html

register = template.Library()

PROVISIONAL_TITLE = "Provisional: its 95 % interval is still too wide to rank it with the others"


def _field(rating: Any, name: str) -> Any:
    return rating[name] if isinstance(rating, dict) else getattr(rating, name)


@register.simple_tag
def provisional_mark(provisional: bool) -> str:
    """The "?" of a provisional rating, explained in its tooltip and read out as "(provisional)"."""
    if not provisional:
        return ""
    return format_html(
        '<abbr class="provisional" title="{}" aria-hidden="true">?</abbr>'
        '<span class="visually-hidden"> (provisional)</span>',
        PROVISIONAL_TITLE,
    )


@register.simple_tag
def rating_figure(rating: Any) -> str:
    """``rating`` is a ``rating_selectors.rating_row`` dict or a ``Rating``/``RatingPoint``."""
    value = float(_field(rating, "rating"))
    low, high = float(_field(rating, "rating_low")), float(_field(rating, "rating_high"))
    half = (high - low) / 2
    mark = provisional_mark(_field(rating, "provisional"))
    return format_html(
        '<span class="rating-figure" data-rating="{}" data-half-width="{}">'
        '<strong>{}</strong>{}<span class="interval" aria-hidden="true"> ± {}</span>'
        '<span class="visually-hidden"> plus or minus {} (95 % interval {} to {})</span></span>',
        f"{value:.2f}",
        f"{half:.2f}",
        f"{value:.0f}",
        mark,
        f"{half:.0f}",
        f"{half:.0f}",
        f"{low:.0f}",
        f"{high:.0f}",
    )
