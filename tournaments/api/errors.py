"""One error body for the whole API.

Every error answer of the API has the same JSON shape, so clients need one code path::

    {"detail": "Some fields are invalid; see errors.",   # a sentence for people
     "code": "invalid",                                   # a stable machine code
     "errors": {"password": ["This password is too short. ..."]}}   # per field, may be {}

Field errors of nested input use dotted paths (``"seats.0.name"``); errors that belong to no
field are under ``"non_field_errors"``. Services raise Django's ``ValidationError``; the handler
turns it into a 400 with this body, so services need not know about DRF. The same goes for what
the request itself gets wrong before any view runs: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``
is a 413 (``too_large``), a body that is not JSON or nests too deep a 400 (``parse_error``, see
``tournaments.api.parsers``), a content type we do not read a 415, and a service that needs the
match queue while Redis is unreachable a 503 (``queue_unavailable``), a user's quota used up a
429 (``quota_exceeded``), never a page of HTML.
"""

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.views import defaults
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from tournaments import messages
from tournaments.services.league_states import QueueUnavailable
from tournaments.services.quotas import QuotaExceeded

NON_FIELD = "non_field_errors"


class ErrorSerializer(serializers.Serializer):
    """The error body, for the OpenAPI schema."""

    detail = serializers.CharField()
    code = serializers.CharField()
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))


# The error answers an endpoint may give, for its schema (`responses={200: ..., **ERRORS}`).
ERRORS = {status: ErrorSerializer for status in (400, 401, 403, 404, 413, 415, 429)}
# What an endpoint that sends matches to the queue may answer on top (Redis unreachable).
QUEUE_ERRORS = {503: ErrorSerializer}
# What a game's log and diagnostics may answer on top (the set is still in play).
SEALED_ERRORS = {409: ErrorSerializer}
RETRY_AFTER_S = 30


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class SetInPlay(exceptions.APIException):
    """A game's log or diagnostics asked for while its set is still being played: a duplicate
    set's other games are dealt the same cards, a rated set's have the same opponents."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "set_in_play"
    default_detail = (
        "The log of this game is published when its set ends: the set's other games are still "
        "being played, dealt the same cards (a duplicate set) or, in rated play, against the "
        "same opponents."
    )


class QuotaLimited(exceptions.APIException):
    """A user's quota (``services.quotas``) is used up: what the service said, as a 429."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "quota_exceeded"


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "queue_unavailable"


def flatten_errors(data: Any, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error structure into ``{dotted.field: [messages]}``."""
    if isinstance(data, dict):
        result: dict[str, list[str]] = {}
        for key, value in data.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            for field, errors in flatten_errors(value, name).items():
                result.setdefault(field, []).extend(errors)
        return result
    if isinstance(data, list) and any(isinstance(item, dict | list) for item in data):
        result = {}
        for index, item in enumerate(data):
            name = f"{prefix}.{index}" if prefix else str(index)
            for field, errors in flatten_errors(item, name).items():
                result.setdefault(field, []).extend(errors)
        return result
    items = data if isinstance(data, list) else [data]
    return {prefix or NON_FIELD: [str(item) for item in items]} if items else {}


def error_body(detail: str, code: str, errors: dict[str, list[str]] | None = None) -> dict:
    return {"detail": detail, "code": code, "errors": errors or {}}


def _too_large() -> RequestTooLarge:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return RequestTooLarge(messages.BODY_TOO_LARGE.format(limit=limit))


def _other_auth_scheme(request: Any) -> str | None:
    """The scheme of an Authorization header that is not ``Token`` (``Bearer``, the usual
    guess), which the token check skips as if there were no header; None otherwise."""
    header = request.META.get("HTTP_AUTHORIZATION", "") if request is not None else ""
    scheme = header.split(" ", 1)[0].strip()
    if not scheme or scheme.lower() == "token":
        return None
    return scheme[:20]


def _in_our_words(exc: Exception, context: dict) -> Exception:
    """The exceptions DRF does not know, or whose words it would choose, as ours."""
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(detail=as_serializer_error(exc))
    if isinstance(exc, RequestDataTooBig):
        return _too_large()
    if isinstance(exc, QueueUnavailable):
        return ServiceUnavailable(messages.QUEUE_UNAVAILABLE)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        scheme = _other_auth_scheme(context.get("request"))
        if scheme is not None:
            told = exceptions.NotAuthenticated(messages.AUTH_SCHEME.format(scheme=scheme))
            # What the view decided for the original: its 401 and WWW-Authenticate (or a 403).
            told.status_code = exc.status_code
            told.auth_header = getattr(exc, "auth_header", None)
            return told
    if isinstance(exc, QuotaExceeded):
        return QuotaLimited(str(exc))
    if isinstance(exc, exceptions.UnsupportedMediaType):
        request = context.get("request")
        media_type = (getattr(request, "content_type", "") or "no content type")[:100]
        detail = messages.UNSUPPORTED_MEDIA_TYPE.format(media_type=media_type)
        return exceptions.UnsupportedMediaType(media_type, detail=detail)
    return exc


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's ``EXCEPTION_HANDLER``: DRF's own handling, then our body shape."""
    exc = _in_our_words(exc, context)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ServiceUnavailable):
        response["Retry-After"] = str(RETRY_AFTER_S)
    if isinstance(exc, exceptions.ValidationError):
        errors = flatten_errors(exc.detail)
        response.data = error_body(messages.VALIDATION_FAILED, "invalid", errors)
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        response.data = error_body(str(exc.detail), code)
    else:
        # Django's Http404 and PermissionDenied, which DRF maps to 404 and 403: the same codes
        # as DRF's own NotFound and PermissionDenied, so a client sees one code per status.
        not_found = response.status_code == status.HTTP_404_NOT_FOUND
        code = "not_found" if not_found else "permission_denied"
        response.data = error_body(str(response.data.get("detail", "")), code)
    return response


def _is_api(request: HttpRequest) -> bool:
    """The API and the live event streams answer programs, which read JSON, not pages."""
    return request.path.startswith(("/api/", "/live/"))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: the API's body under /api/ and /live/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(error_body(messages.NOT_FOUND, "not_found"), status=404)
    return defaults.page_not_found(request, exception)


@sync_and_async_middleware
def api_not_found_middleware(get_response: Callable) -> Callable:
    """Django's own 404 page under /api/ or /live/ becomes the API's body.

    ``handler404`` is not asked when ``DEBUG`` is on: Django answers an unknown path with its
    technical HTML page then, which a program reading our API cannot parse. The API's own
    responses (DRF's, in whatever format the client negotiated) are left alone. Placed outside
    ``CommonMiddleware``, so a path that only lacks its slash is still redirected. Sync and
    async alike, so the live streams (async views under ASGI) are not sent through a thread.
    """
    if iscoroutinefunction(get_response):

        async def middleware_async(request: HttpRequest) -> HttpResponse:
            return _as_api_not_found(request, await get_response(request))

        return middleware_async

    def middleware(request: HttpRequest) -> HttpResponse:
        return _as_api_not_found(request, get_response(request))

    return middleware


def _as_api_not_found(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    if (
        response.status_code == status.HTTP_404_NOT_FOUND
        and _is_api(request)
        and not isinstance(response, Response | JsonResponse)
    ):
        return page_not_found(request, Http404())
    return response


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400``: the API's body under /api/ (a body over the size limit is a 413)."""
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return JsonResponse(error_body(str(_too_large().detail), "too_large"), status=413)
    return JsonResponse(error_body(messages.BAD_REQUEST, "bad_request"), status=400)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: the API's body under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(error_body(messages.SERVER_ERROR, "server_error"), status=500)
    return defaults.server_error(request)
