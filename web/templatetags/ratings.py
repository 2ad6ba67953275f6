"""A published rating as pages show it: "1523 ± 41", and "?" when provisional.

One tag for the rankings and the bot page, so both say the same thing the same way: the figure,
its 95 % interval, and the provisional mark, each with words a screen reader reads out (the
glyphs "±" and "?" alone say little).
"""

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

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
    # Every part is a formatted number or the mark's own safe markup: nothing to escape, and a
    # ranking shows this for every row (format_html would escape each figure again).
    return mark_safe(
        f'<span class="rating-figure" data-rating="{value:.2f}" data-half-width="{half:.2f}">'
        f"<strong>{value:.0f}</strong>{mark}"
        f'<span class="interval" aria-hidden="true"> ± {half:.0f}</span>'
        f'<span class="visually-hidden"> plus or minus {half:.0f} (95 % interval {low:.0f} to '
        f"{high:.0f})</span></span>"
    )
