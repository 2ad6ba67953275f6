"""The API client every test module uses to speak as a user: signed in with a fresh token."""

from __future__ import annotations

from typing import Any


def client_for(user: Any):
    """An ``APIClient`` that sends ``Authorization: Token <key>`` with a new token of ``user``
    (tokens are stored hashed: the key exists only in the answer that makes it)."""
    from knox.models import AuthToken
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(user=user)[1]}")
    return client
