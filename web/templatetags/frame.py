"""``{% frame_url %}`` and ``{% frame_static %}``: the links and static files of the frame every
page shares (web/templates/web/base.html), looked up once per process.

The frame names a dozen addresses and three static files, the same on every request: reversing
each (``{% url %}`` walks the URL patterns) and looking each up (``{% static %}``, a manifest
lookup in production) cost more than the rest of the frame. These tags answer exactly what
``url`` and ``static`` answer for a name without arguments and a path, remembered per URL
configuration and script prefix, and forgotten when a setting they depend on changes (tests).
"""

from __future__ import annotations

import functools

from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.templatetags.static import static
from django.urls import get_script_prefix, get_urlconf, reverse

register = template.Library()

# Settings whose change changes a reversed address or a static file's URL.
_SETTINGS = {"ROOT_URLCONF", "STATIC_URL", "STATIC_ROOT", "STORAGES", "DEBUG", "INSTALLED_APPS"}


@functools.cache
def _reversed(name: str, urlconf: str | None, prefix: str) -> str:
    return reverse(name, urlconf=urlconf)


@functools.cache
def _static(path: str) -> str:
    return static(path)


@register.simple_tag
def frame_url(name: str) -> str:
    """``{% url name %}`` of a URL without arguments."""
    return _reversed(name, get_urlconf(), get_script_prefix())


@register.simple_tag
def frame_static(path: str) -> str:
    """``{% static path %}``."""
    return _static(path)


@receiver(setting_changed)
def _forget(*, setting: str, **kwargs: object) -> None:
    if setting in _SETTINGS:
        _reversed.cache_clear()
        _static.cache_clear()
