"""``{{ value|json_data:"element-id" }}``: Django's ``json_script`` filter, encoded by orjson.

A game page embeds its whole log with the per-play figures (~40 KB of JSON) for the replay viewer.
Writing it with the standard library's encoder and ``str.translate``, as ``json_script`` does, was
about a third of the template's time on a page's first read (docs/benchmarks.md, "The game
page's first read"). The markup and the escaping are ``json_script``'s: ``<``, ``>`` and ``&``
become ``\\u`` escapes, so no string in the data can end the script element or open a comment.
"""

from __future__ import annotations

from typing import Any

import orjson
from django import template
from django.core.serializers.json import DjangoJSONEncoder
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

ESCAPES = (("<", "\\u003C"), (">", "\\u003E"), ("&", "\\u0026"))
# Anything orjson does not write itself (a lazy translation, a Decimal) as json_script writes it.
_DJANGO_DEFAULT = DjangoJSONEncoder().default


@register.filter(is_safe=True)
def json_data(value: Any, element_id: str) -> SafeString:
    """``value`` as JSON in ``<script id="element_id" type="application/json">``."""
    text = orjson.dumps(value, default=_DJANGO_DEFAULT, option=orjson.OPT_NON_STR_KEYS).decode()
    for char, escape in ESCAPES:
        text = text.replace(char, escape)
    return format_html(
        '<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text)
    )
