"""The Jinja2 environment of the pages' row lists (web/jinja2/, settings ``TEMPLATES``).

A page with a long table or list (the rankings, a league's standings and crosstable, a bot's
games) is a Django template that includes its rows with ``{% rows %}``: Django's engine costs a
few microseconds per variable, tag and filter, which a page of hundreds of cells multiplies into
most of its time, where Jinja2 compiles the template to Python. The rows render exactly as the
Django markup did: the same filters (Django's own ``floatformat``) and tags (``rating_figure``).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import Any

from django.template.defaultfilters import floatformat, pluralize, truncatechars
from django.urls import get_script_prefix, get_urlconf, reverse
from jinja2 import Environment

from web.templatetags.matchups import teams_label
from web.templatetags.ratings import rating_figure

# An id no row has, reversed once per URL name: its place in the path is where a row's id goes.
_PLACEHOLDER = 987654321987654321


def whole(value: float) -> str:
    """``value`` rounded to a whole number as Django's ``floatformat:0`` rounds it (half away
    from zero, no "-0"), without the locale lookups that filter makes on every call."""
    rounded = Decimal(repr(float(value))).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return f"{rounded if rounded else Decimal(0)}"


def percent(fraction: float) -> str:
    """A fraction as a whole percentage, rounded as Django's ``{% widthratio x 1 100 %}``."""
    return str(round(float(fraction) * 100))


@cache
def _url_parts(name: str, prefix: str, urlconf: Any) -> tuple[str, str]:
    before, _, after = reverse(name, args=[_PLACEHOLDER]).partition(str(_PLACEHOLDER))
    return before, after


def row_url(name: str, row_id: int) -> str:
    """``reverse(name, args=[row_id])`` for a URL whose only argument is a row id, at the cost
    of a string join: a page links every row, and ``reverse`` walks the URL patterns each time."""
    before, after = _url_parts(name, get_script_prefix(), get_urlconf())
    return f"{before}{int(row_id)}{after}"


def environment(**options: Any) -> Environment:
    """The environment Django's Jinja2 backend renders with (autoescaping on, as Django's)."""
    env = Environment(**options)
    env.globals.update(
        url=row_url, rating_figure=rating_figure, percent=percent, matchup=teams_label
    )
    env.filters.update(
        floatformat=floatformat, pluralize=pluralize, truncatechars=truncatechars, whole=whole
    )
    return env
