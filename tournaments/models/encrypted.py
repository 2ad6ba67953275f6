"""Secrets we must be able to read back (to sign with them), encrypted at rest.

A bot's signing secret and an owner's webhook secret sign our calls, so they cannot be hashed
like API tokens; they are stored as Fernet tokens (AES-128-CBC with HMAC-SHA256, the
``cryptography`` package) under ``ESCOBA_SECRETS_KEY``, which lives in the environment and never
in the database. A copy of the database alone gives away none of them.

``ESCOBA_SECRETS_KEY`` is a comma-separated list (``MultiFernet``): the first key encrypts, every
key decrypts. Rotation: put the new key first, run ``manage.py secrets_rotate`` (every stored
secret is encrypted again under the first key), then remove the old key.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

SECRET_UNREADABLE = (
    "A stored secret cannot be decrypted with ESCOBA_SECRETS_KEY: a key was removed before "
    "`manage.py secrets_rotate` had encrypted everything under the new one, or the key is wrong."
)


class SecretUnreadable(ImproperlyConfigured):
    """The stored token was not made with any key of ``ESCOBA_SECRETS_KEY``."""


@functools.cache
def _box(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys])


def secret_box() -> MultiFernet:
    """The keys of ``ESCOBA_SECRETS_KEY``, first one encrypting."""
    keys = tuple(settings.ESCOBA_SECRETS_KEYS)
    if not keys:
        raise ImproperlyConfigured("Set the environment variable ESCOBA_SECRETS_KEY.")
    return _box(keys)


def secret_encrypt(plain: str) -> str:
    return secret_box().encrypt(plain.encode()).decode()


def secret_decrypt(token: str) -> str:
    try:
        return secret_box().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable(SECRET_UNREADABLE) from None


class EncryptedTextField(models.TextField):
    """Text kept encrypted in the database and clear in Python. An empty value stays empty
    (it says only "no secret"). It cannot be filtered on: each write encrypts anew."""

    def from_db_value(self, value: Any, expression: Any, db_connection: Any) -> Any:
        if not value:
            return value
        return secret_decrypt(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if not value:
            return value
        return secret_encrypt(value)


def encrypted_columns() -> Iterator[tuple[str, str, str]]:
    """(table, primary key column, column) of every encrypted field of every installed model."""
    from django.apps import apps

    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, EncryptedTextField):
                yield model._meta.db_table, model._meta.pk.column, field.column
