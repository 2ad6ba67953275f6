"""Accounts: sign-up and API tokens, on Django's built-in User and django-rest-knox's tokens.

A token is given out once, when it is made, and stored only as its SHA-512 digest (knox), so a
copy of the database holds no usable token. Each lasts ``ESCOBA_API_TOKEN_TTL_DAYS`` days; an
account keeps at most ``ESCOBA_API_TOKENS_PER_USER`` (making one more drops the oldest), and its
owner may revoke any of them (``token_revoke``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from knox.models import AuthToken

from tournaments import messages
from tournaments.usernames import username_reserved


@dataclass(frozen=True)
class IssuedToken:
    """A token just made: ``key`` is what the client sends, shown this once and never again."""

    user: Any
    key: str
    token: AuthToken


def _token_issue(user: Any) -> IssuedToken:
    """A new token for ``user``, dropping expired ones and the oldest beyond the limit."""
    instance, key = AuthToken.objects.create(user=user)
    kept = user.auth_token_set.order_by("-created").values_list("digest", flat=True)
    keep = max(1, settings.ESCOBA_API_TOKENS_PER_USER)
    user.auth_token_set.exclude(digest__in=list(kept[:keep])).delete()
    return IssuedToken(user=user, key=key, token=instance)


@transaction.atomic
def account_register(*, username: str, password: str) -> IssuedToken:
    """Create a user and its first API token; ``ValidationError`` lists every problem by field.

    Names of the arena's own accounts, and names that only look like them
    (tournaments/usernames.py), are refused. The password goes through
    ``AUTH_PASSWORD_VALIDATORS`` with the would-be user, so the similarity check can compare it
    with the username.
    """
    user_model = get_user_model()
    user = user_model(username=username)
    errors: dict[str, list[str]] = {}
    try:
        user.clean_fields(exclude=["password"])
    except ValidationError as error:
        errors.update(error.message_dict)
    if "username" not in errors:
        if username_reserved(username):
            errors["username"] = [messages.USERNAME_RESERVED]
        elif user_model.objects.filter(username__iexact=username).exists():
            errors["username"] = [messages.USERNAME_TAKEN]
    try:
        validate_password(password, user=user)
    except ValidationError as error:
        errors["password"] = list(error.messages)
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    user.save()
    return _token_issue(user)


@transaction.atomic
def account_token_obtain(*, username: str, password: str) -> IssuedToken:
    """A new API token for the account; wrong credentials raise.

    Tokens are stored hashed, so an earlier one cannot be handed out again: each call makes one
    (the client keeps it); the oldest beyond ``ESCOBA_API_TOKENS_PER_USER`` are dropped.
    """
    user = authenticate(username=username, password=password)
    if user is None:
        raise ValidationError({"non_field_errors": [messages.INVALID_CREDENTIALS]})
    return _token_issue(user)


@transaction.atomic
def token_create(*, user: Any) -> IssuedToken:
    """A new API token for a signed-in user (the tokens page); its key is shown this once."""
    return _token_issue(user)


@transaction.atomic
def token_revoke(*, user: Any, token_id: str) -> None:
    """Revoke the owner's token ``token_id`` (its ``token_key``, the first characters of the
    token); another's token or an unknown id is ``ObjectDoesNotExist``."""
    deleted, _ = AuthToken.objects.filter(user=user, token_key=token_id).delete()
    if not deleted:
        raise ObjectDoesNotExist(messages.TOKEN_NOT_FOUND)


@transaction.atomic
def token_revoke_all(*, user: Any) -> int:
    """Revoke every API token of ``user`` (a leaked one whose id is unknown); how many."""
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted
