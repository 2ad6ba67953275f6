"""Schema, Swagger UI, admin and the rules every API view must follow."""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.mixins import ListModelMixin

from tests.conftest import USER_PASSWORD


def test_schema_is_openapi_3_and_lists_the_auth_endpoints(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in ("/api/auth/register/", "/api/auth/token/", "/api/health/"):
        assert path in schema["paths"]
    assert "tokenAuth" in schema["components"]["securitySchemes"]


def test_schema_documents_the_error_body(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()

    register = schema["paths"]["/api/auth/register/"]["post"]
    assert register["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


def test_swagger_ui_uses_our_static_files_only(client):
    response = client.get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html)
    assert assets, "the page should load Swagger UI's scripts and styles"
    for asset in assets:
        # Swagger UI's own files, and our stylesheet over them (its AA colours)
        assert asset.startswith(("/static/drf_spectacular_sidecar/", "/static/web/")), asset
        served = client.get(asset)
        assert served.status_code == 200, asset
        b"".join(served.streaming_content if served.streaming else [served.content])
    # Nothing from another host: every address the page links is one of ours, and no absolute
    # address appears anywhere (a bare "cdn" check tripped over a random token of the page that
    # happened to hold those three letters).
    for address in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert address.startswith("/") and not address.startswith("//"), address
    assert re.search(r"https?://|cdn\.", html, re.IGNORECASE) is None


@pytest.mark.django_db
def test_admin_is_for_staff_only(client, django_user_model):
    django_user_model.objects.create_user(username="player", password=USER_PASSWORD)
    django_user_model.objects.create_user(username="boss", password=USER_PASSWORD, is_staff=True)

    assert client.get("/admin/").status_code == 302
    client.login(username="player", password=USER_PASSWORD)
    assert client.get("/admin/").status_code == 302
    client.login(username="boss", password=USER_PASSWORD)
    assert client.get("/admin/").status_code == 200


def _views(resolver: URLResolver, prefix: str = ""):
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _views(pattern, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern.callback


def test_every_api_list_is_paginated():
    """Guards later endpoints too: a list without pagination would grow without bound."""
    lists = []
    for route, callback in _views(get_resolver()):
        view_class = getattr(callback, "cls", None)
        if route.startswith("api/") and view_class and issubclass(view_class, ListModelMixin):
            lists.append(route)
            assert view_class.pagination_class is not None, route
    assert all(route.startswith("api/") for route in lists)


def test_every_api_view_is_throttled_unless_it_is_the_health_check():
    for route, callback in _views(get_resolver()):
        view_class = getattr(callback, "cls", None)
        if not route.startswith("api/") or view_class is None or route == "api/health/":
            continue
        assert view_class.throttle_classes, route
