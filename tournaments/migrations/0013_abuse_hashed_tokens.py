"""API tokens move from DRF's table (keys in clear) to django-rest-knox's (digests only).

Every token given out before keeps working: its digest is stored, with an expiry of
ESCOBA_API_TOKEN_TTL_DAYS from now; then DRF's table, the last place the keys were in clear, is
dropped. Raw SQL, since DRF's token app is no longer installed. Not reversible: the keys are gone.
"""

from datetime import UTC, datetime

from django.conf import settings
from django.db import migrations
from django.utils import timezone
from knox.crypto import hash_token
from knox.settings import CONSTANTS

OLD_TABLE = "authtoken_token"


def move_tokens(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    auth_token = apps.get_model("knox", "AuthToken")
    expiry = timezone.now() + settings.REST_KNOX["TOKEN_TTL"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {OLD_TABLE}")  # noqa: S608
        for key, user_id, created in cursor.fetchall():
            digest = hash_token(key)
            auth_token(
                digest=digest,
                token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH],
                user_id=user_id,
                expiry=expiry,
            ).save()
            if isinstance(created, datetime) and timezone.is_naive(created):
                created = timezone.make_aware(created, UTC)  # SQLite's raw rows carry no zone
            auth_token.objects.filter(digest=digest).update(created=created)
    schema_editor.execute(f"DROP TABLE {OLD_TABLE}")
    schema_editor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'")


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0012_abuse_encrypted_secrets"),
        ("knox", "0009_extend_authtoken_field"),
    ]

    operations = [migrations.RunPython(move_tokens, migrations.RunPython.noop)]
