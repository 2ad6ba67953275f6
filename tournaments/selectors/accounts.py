"""Reads of accounts: an owner's API tokens (never their keys: only digests are stored)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from knox.models import AuthToken


def tokens_of_user(*, user: Any) -> QuerySet[AuthToken]:
    """The user's API tokens that have not expired, newest first."""
    return (
        AuthToken.objects.filter(user=user)
        .exclude(expiry__lt=timezone.now())
        .order_by("-created", "token_key")
    )
