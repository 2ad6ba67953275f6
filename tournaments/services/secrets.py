"""Secrets at rest: encrypting the stored ones again under a new key (key rotation)."""

from __future__ import annotations

from cryptography.fernet import InvalidToken
from django.db import connection, transaction

from tournaments.models.encrypted import (
    SECRET_UNREADABLE,
    SecretUnreadable,
    encrypted_columns,
    secret_box,
)


def secrets_rotate() -> int:
    """Encrypt every stored secret again under the first key; the number of values rewritten.

    Run after putting a new key first in ``ESCOBA_SECRETS_KEY`` and before removing the old
    one. One transaction: a failure (a value no key decrypts) changes nothing.
    """
    box = secret_box()
    rewritten = 0
    with transaction.atomic(), connection.cursor() as cursor:
        quote = connection.ops.quote_name
        for table, pk, column in encrypted_columns():
            cursor.execute(
                f"SELECT {quote(pk)}, {quote(column)} FROM {quote(table)} "  # noqa: S608
                f"WHERE {quote(column)} <> ''"
            )
            for row_id, token in cursor.fetchall():
                try:
                    fresh = box.rotate(token.encode()).decode()
                except InvalidToken:
                    raise SecretUnreadable(SECRET_UNREADABLE) from None
                cursor.execute(
                    f"UPDATE {quote(table)} SET {quote(column)} = %s "  # noqa: S608
                    f"WHERE {quote(pk)} = %s",
                    [fresh, row_id],
                )
                rewritten += 1
    return rewritten
