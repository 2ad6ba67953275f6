"""The frame every page shares (web/templates/web/base.html) looks its links and static files up
once per process (web/templatetags/frame.py) and writes byte for byte what Django's ``{% url %}``
and ``{% static %}`` write, for anonymous and signed-in readers, and after the settings behind
them change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.cache import SessionStore
from django.template import RequestContext, engines
from django.test import RequestFactory, override_settings
from django.urls import set_script_prefix

import web

pytestmark = pytest.mark.django_db

BASE = Path(web.__file__).parent / "templates" / "web" / "base.html"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def _with_djangos_tags(source: str) -> str:
    """base.html as it would be with Django's own tags."""
    source = source.replace("{% load frame %}", "{% load static %}", 1)
    return source.replace("{% frame_static ", "{% static ").replace("{% frame_url ", "{% url ")


def _request(user) -> object:
    request = RequestFactory().get("/")
    request.user, request.session = user, SessionStore()
    request._messages = FallbackStorage(request)
    return request


def _both(request, nav: str) -> tuple[str, str]:
    engine = engines["django"].engine
    source = BASE.read_text()
    assert "{% frame_url " in source and "{% frame_static " in source
    ours = engine.get_template("web/base.html").render(RequestContext(request, {"nav": nav}))
    theirs = engine.from_string(_with_djangos_tags(source)).render(
        RequestContext(request, {"nav": nav})
    )
    return CSRF.sub("CSRF", ours), CSRF.sub("CSRF", theirs)


@pytest.mark.parametrize("nav", ["rankings", "leagues", "my_bots", "login"])
@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed-in"])
def test_the_frame_is_what_djangos_tags_write(nav, signed_in):
    user = get_user_model().objects.create_user("frame-reader") if signed_in else AnonymousUser()
    request = _request(user)
    messages.info(request, "A message & <its> markup")
    ours, theirs = _both(request, nav)
    assert ours == theirs
    assert ("Log out" in ours) == signed_in and "A message &amp; &lt;its&gt; markup" in ours


def test_the_frame_follows_the_script_prefix_and_static_url():
    ours, _ = _both(_request(AnonymousUser()), "rankings")
    assert 'href="/static/web/css/site.css"' in ours and 'href="/accounts/login/"' in ours
    with override_settings(STATIC_URL="/elsewhere/"):
        set_script_prefix("/arena/")
        try:
            ours, theirs = _both(_request(AnonymousUser()), "rankings")
        finally:
            set_script_prefix("/")
    assert ours == theirs
    assert 'href="/elsewhere/web/css/site.css"' in ours and 'href="/arena/accounts/login/"' in ours
    ours, theirs = _both(_request(AnonymousUser()), "rankings")
    assert ours == theirs and 'href="/static/web/css/site.css"' in ours
