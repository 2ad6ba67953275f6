"""The API's JSON renderer: DRF's bytes, written by orjson where orjson writes the same.

DRF's ``JSONRenderer`` encodes through Python's ``json`` module: 0.5 ms of the 5-6 ms a page of
games or leagues costs in CPU (40-46 KB of JSON), where orjson takes 0.04 ms. Both write strings
(``ensure_ascii=False``), ints, ``true``/``false``/``null`` and compact separators alike, and
orjson writes a finite float as Python's ``repr`` does except below 1e-4, where ``repr`` writes
``1e-05`` and orjson ``0.00001`` or ``1e-7``. So this renderer takes orjson's bytes only when
none of them could be such a float (no digit followed by ``e-``, no ``0.0000``; a string that
happens to hold those costs the slower path, never different bytes), and hands everything else
to DRF's renderer: indented output (``; indent=4``, the browsable API), Decimals, datetimes,
dataclasses, subclasses of the built-in types, non-string keys and integers past 64 bits.
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

import orjson
from rest_framework import renderers
from rest_framework.settings import api_settings

# orjson's spelling of the floats it writes differently from ``repr`` (|x| < 1e-4): ``0.0000...``
# or a mantissa and a one-digit negative exponent (``1.5e-7``). Looked for as plain bytes first
# (a regular expression over 40 KB costs a tenth of a millisecond).
_EXPONENT = re.compile(rb"[0-9]e-")
_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# DRF escapes these two (JSON allows them raw, JavaScript did not); orjson writes them raw.
_LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def _not_native(value: Any) -> NoReturn:
    """orjson's ``default``: anything it does not write as ``json`` does is DRF's to write."""
    raise TypeError(type(value).__name__)


class JSONRenderer(renderers.JSONRenderer):
    """``rest_framework.renderers.JSONRenderer`` (same media type, format and bytes), through
    orjson whenever the bytes are the same. Non-finite floats, which DRF's strict JSON refuses
    with an error, come out as ``null``: no row the API reads holds one."""

    fast = api_settings.UNICODE_JSON and api_settings.COMPACT_JSON

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict | None = None,
    ) -> bytes:
        if data is None or not self.fast or "indent" in (accepted_media_type or "").lower():
            return super().render(data, accepted_media_type, renderer_context)
        if (renderer_context or {}).get("indent") is not None:
            return super().render(data, accepted_media_type, renderer_context)
        try:
            answer = orjson.dumps(data, default=_not_native, option=_OPTIONS)
        except orjson.JSONEncodeError:
            return super().render(data, accepted_media_type, renderer_context)
        if b"0.0000" in answer or (b"e-" in answer and _EXPONENT.search(answer)):
            return super().render(data, accepted_media_type, renderer_context)
        if not answer.isascii():
            for raw, escaped in _LINE_SEPARATORS:
                answer = answer.replace(raw, escaped)
        return answer


# The renderers of the lists that use this one: the project's, with this JSON renderer for DRF's.
RENDERERS = [
    JSONRenderer if renderer is renderers.JSONRenderer else renderer
    for renderer in api_settings.DEFAULT_RENDERER_CLASSES
]
