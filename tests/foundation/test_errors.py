"""The one error body of the API (tournaments/api/errors.py)."""

import asyncio

import pytest
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.test import AsyncClient
from rest_framework import exceptions

from tournaments import messages
from tournaments.api.errors import exception_handler, flatten_errors


def test_flatten_errors_uses_dotted_paths_for_nested_input():
    nested = {
        "name": ["Too long."],
        "seats": [{}, {"url": ["Not a URL.", "Private address."]}],
        "options": {"target": ["Must be 15 or more."]},
        "non_field_errors": ["Bad combination."],
    }

    assert flatten_errors(nested) == {
        "name": ["Too long."],
        "seats.1.url": ["Not a URL.", "Private address."],
        "options.target": ["Must be 15 or more."],
        "non_field_errors": ["Bad combination."],
    }


def test_flatten_errors_puts_a_bare_list_under_non_field_errors():
    assert flatten_errors(["Nope."]) == {"non_field_errors": ["Nope."]}


def test_django_validation_error_from_a_service_becomes_a_400():
    response = exception_handler(DjangoValidationError({"url": ["Unreachable."]}), {})

    assert response.status_code == 400
    assert response.data == {
        "detail": messages.VALIDATION_FAILED,
        "code": "invalid",
        "errors": {"url": ["Unreachable."]},
    }


def test_a_message_only_validation_error_lands_in_non_field_errors():
    response = exception_handler(DjangoValidationError("League is full."), {})

    assert response.data["errors"] == {"non_field_errors": ["League is full."]}


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (exceptions.NotFound(), 404, "not_found"),
        (exceptions.PermissionDenied(), 403, "permission_denied"),
        (exceptions.MethodNotAllowed("PATCH"), 405, "method_not_allowed"),
        (exceptions.Throttled(wait=3), 429, "throttled"),
        (Http404("gone"), 404, "not_found"),
        (PermissionDenied(), 403, "permission_denied"),
    ],
)
def test_other_errors_share_the_shape(exc, status, code):
    response = exception_handler(exc, {})

    assert response.status_code == status
    assert set(response.data) == {"detail", "code", "errors"}
    assert response.data["code"] == code
    assert response.data["errors"] == {}
    assert isinstance(response.data["detail"], str) and response.data["detail"]


def test_unexpected_exceptions_are_left_to_django():
    assert exception_handler(RuntimeError("bug"), {}) is None


def test_unknown_api_urls_answer_with_the_error_body(client):
    response = client.get("/api/no-such-thing/")

    assert response.status_code == 404
    assert response.json() == {"detail": messages.NOT_FOUND, "code": "not_found", "errors": {}}


def test_unknown_pages_outside_the_api_stay_html(client):
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_unknown_api_urls_answer_with_the_error_body_in_debug_too(client, settings):
    # With DEBUG on, Django answers an unknown path with its technical page, not handler404.
    settings.DEBUG = True

    for path in ("/api/", "/api/no-such-thing/", "/live/no-such-stream/"):
        response = client.get(path, HTTP_ACCEPT="text/html")

        assert response.status_code == 404, path
        assert response.json() == {"detail": messages.NOT_FOUND, "code": "not_found", "errors": {}}


def test_an_api_path_without_its_slash_is_still_redirected(client):
    response = client.get("/api/bots")

    assert response.status_code == 301
    assert response["Location"] == "/api/bots/"


@pytest.mark.django_db
def test_the_apis_own_not_found_is_left_as_it_negotiated(client, settings):
    settings.DEBUG = True

    response = client.get("/api/bots/999999/", HTTP_ACCEPT="text/html")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_unknown_api_urls_answer_with_the_error_body_under_asgi(settings):
    settings.DEBUG = True

    response = asyncio.run(AsyncClient().get("/live/no-such-stream/"))

    assert response.status_code == 404
    assert response.json() == {"detail": messages.NOT_FOUND, "code": "not_found", "errors": {}}
