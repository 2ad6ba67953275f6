"""The lists' JSON renderer (tournaments/api/renderers.py) writes exactly DRF's bytes: through
orjson where orjson spells everything alike, through DRF's renderer everywhere else."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rest_framework import renderers

from tournaments.api.renderers import RENDERERS, JSONRenderer

OURS = JSONRenderer()
DRF = renderers.JSONRenderer()

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400)
@given(documents)
@example({"latency_mean_ms": 1e-05, "b": 1.5e-07, "c": 0.0000999, "d": -2.5e-06})
@example({"big": 1e16, "small": 1e-4, "zero": -0.0, "huge": 2**64, "neg": -(2**63) - 1})
@example(["\u2028\u2029", "\x00\x1f\x7f", "é😀", "1e-5 as text", "0.00001"])
def test_same_bytes_as_drf(document):
    assert OURS.render(document, "application/json", {}) == DRF.render(
        document, "application/json", {}
    )


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_alone(number):
    assert OURS.render([number], "application/json", {}) == DRF.render([number], None, {})


@dataclasses.dataclass
class Point:
    x: int


class Name(str):
    pass


@pytest.mark.parametrize(
    "document",
    [
        {"at": datetime.datetime(2026, 1, 2, 3, 4, 5, 6789, tzinfo=datetime.UTC)},
        {"day": datetime.date(2026, 1, 2)},
        {"rating": decimal.Decimal("1500.25")},
        {"point": Point(3)},
        {"name": Name("subclass")},
        {1: "int key", None: "none key"},
        [2**65],
    ],
    ids=["datetime", "date", "decimal", "dataclass", "str-subclass", "int-keys", "bigint"],
)
def test_what_orjson_writes_otherwise_is_drfs(document):
    assert _answer(OURS, document) == _answer(DRF, document)


def _answer(renderer: renderers.JSONRenderer, document: object) -> bytes | str:
    """The bytes, or the kind of error (DRF's encoder refuses a dataclass)."""
    try:
        return renderer.render(document, "application/json", {})
    except (TypeError, ValueError) as error:
        return type(error).__name__


@pytest.mark.parametrize(
    ("media_type", "context"),
    [
        ("application/json; indent=4", {}),
        ("application/json; INDENT=4", {}),  # DRF reads parameter names in any case
        ("application/json", {"indent": 2}),
        (None, None),
    ],
    ids=["indent-header", "indent-header-upper", "indent-context", "no-context"],
)
def test_indented_and_contextless_answers_are_drfs(media_type, context):
    document = {"results": [{"id": 1, "latency": 2.5}], "next": None}
    assert OURS.render(document, media_type, context) == DRF.render(document, media_type, context)


def test_nothing_renders_as_nothing():
    assert OURS.render(None) == b""


def test_a_non_finite_float_is_null_where_drf_refuses_it():
    assert OURS.render({"x": math.inf}) == b'{"x":null}'
    with pytest.raises(ValueError):
        DRF.render({"x": math.inf})


def test_the_lists_keep_the_projects_other_renderers():
    assert RENDERERS[0] is JSONRenderer
    assert renderers.BrowsableAPIRenderer in RENDERERS
    assert (JSONRenderer.media_type, JSONRenderer.format) == ("application/json", "json")
