"""Bots' signing secrets and owners' webhook secrets, encrypted at rest (ESCOBA_SECRETS_KEY).

The columns become text holding Fernet tokens; the values stored in clear until now are
encrypted in place (and decrypted again when the migration is reversed). Raw SQL, because the
historical models would read these columns through the field, which expects tokens already.
"""

from django.db import migrations

import tournaments.models.encrypted
from tournaments.models.encrypted import secret_decrypt, secret_encrypt

COLUMNS = [("tournaments_bot", "secret"), ("tournaments_notificationsettings", "webhook_secret")]


def _rewrite(schema_editor, change) -> None:
    quote = schema_editor.connection.ops.quote_name
    with schema_editor.connection.cursor() as cursor:
        for table, column in COLUMNS:
            cursor.execute(
                f"SELECT id, {quote(column)} FROM {quote(table)} WHERE {quote(column)} <> ''"
            )
            for row_id, value in cursor.fetchall():
                cursor.execute(
                    f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE id = %s",
                    [change(value), row_id],
                )


def encrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, secret_encrypt)


def decrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, secret_decrypt)


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0011_orderings_by_key_columns")]

    operations = [
        migrations.AlterField(
            model_name="bot",
            name="secret",
            field=tournaments.models.encrypted.EncryptedTextField(),
        ),
        migrations.AlterField(
            model_name="notificationsettings",
            name="webhook_secret",
            field=tournaments.models.encrypted.EncryptedTextField(blank=True),
        ),
        migrations.RunPython(encrypt, decrypt),
    ]
