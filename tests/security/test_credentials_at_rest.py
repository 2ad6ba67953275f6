"""Credentials at rest: a copy of the database gives away no usable API token, bot secret or
webhook secret; tokens expire and their owner revokes them; the secrets key rotates.

The hostile test takes the database as a thief would (the SQLite file's bytes, and every row of
every table through SQL on any database) and tries what it finds.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.conftest import USER_PASSWORD
from tournaments import messages
from tournaments.models import Bot, NotificationSettings
from tournaments.models.encrypted import SecretUnreadable

ME = "/api/auth/me/"
TOKENS = "/api/auth/tokens/"
BOT_SECRET = "whsec_" + "c3RvbGVuLWRhdGFiYXNlLWJvdC1zZWNyZXQtMTIzNA=="
WEBHOOK_SECRET = "whsec_" + "c3RvbGVuLWRhdGFiYXNlLXdlYmhvb2stc2VjcmV0LTU2"


def _client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def _register(username: str = "maria") -> str:
    response = APIClient().post(
        "/api/auth/register/", {"username": username, "password": USER_PASSWORD}
    )
    assert response.status_code == 201, response.content
    return response.json()["token"]


def _everything_stored() -> str:
    """Every value of every row of every table, as text: what a database dump holds."""
    quote = connection.ops.quote_name
    dump = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {quote(table)}")  # noqa: S608
            dump.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(dump)


def _database_files() -> list[Path]:
    name = Path(connection.settings_dict["NAME"])
    paths = (name, Path(f"{name}-wal"), Path(f"{name}-shm"))
    return [path for path in paths if path.exists()]


# The thief reads the files from a process of its own, as a thief would. Not from this one: a
# process that closes any file descriptor of a SQLite file loses every POSIX lock it holds on
# that file, its open connections' included. The next process to open the database then takes
# itself for the first, rebuilds the WAL index, and from then on the two processes' commits no
# longer see each other (https://sqlite.org/howtocorrupt.html, 2.2).
STEAL = (
    "import sys\nfor path in sys.argv[1:]:\n    sys.stdout.buffer.write(open(path, 'rb').read())"
)


def _stolen_bytes(paths: list[Path]) -> bytes:
    return subprocess.run(
        [sys.executable, "-c", STEAL, *map(str, paths)], capture_output=True, check=True
    ).stdout


# Another process: adds a group, and prints the names of all groups it sees.
ANOTHER_PROCESS = (
    "import json, sqlite3, sys\n"
    "database = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "database.execute('INSERT INTO auth_group (name) VALUES (?)', (sys.argv[2],))\n"
    "print(json.dumps([name for (name,) in database.execute('SELECT name FROM auth_group')]))"
)


def _another_process_adds_a_group(name: str) -> set[str]:
    """The groups another process sees once it has added ``name``."""
    path = str(connection.settings_dict["NAME"])
    run = [sys.executable, "-c", ANOTHER_PROCESS, path, name]
    return set(json.loads(subprocess.run(run, capture_output=True, check=True).stdout))


def _groups() -> set[str]:
    return set(Group.objects.values_list("name", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_stolen_database_yields_no_usable_token_or_secret(settings):
    token = _register()
    owner = AuthToken.objects.get().user
    bot = Bot.objects.create(owner=owner, name="loot", url="http://127.0.0.1:9/", secret=BOT_SECRET)
    NotificationSettings.objects.create(user=owner, webhook_secret=WEBHOOK_SECRET)

    dump = _everything_stored()
    files = _stolen_bytes(_database_files())
    assert "loot" in dump
    if connection.vendor == "sqlite":
        assert b"loot" in files, "the file read is the database the rows are in"
        # The theft left the database whole for the processes that share it: each process's
        # commits are seen by this one, and this one's by the processes that open it later.
        Group.objects.create(name="one")
        assert _another_process_adds_a_group("two") == {"one", "two"}
        assert _groups() == {"one", "two"}
        Group.objects.create(name="three")
        assert _another_process_adds_a_group("four") == {"one", "two", "three", "four"}
        assert _groups() == {"one", "two", "three", "four"}
    for secret in (token, BOT_SECRET, WEBHOOK_SECRET):
        assert secret not in dump
        assert secret.encode() not in files

    # What the thief has for the token (its first characters and a digest) opens nothing.
    stored = AuthToken.objects.get()
    for guess in (stored.token_key, stored.digest, stored.token_key + "0" * 49):
        assert _client(guess).get(ME).status_code == 401
    assert _client(token).get(ME).status_code == 200

    # The bot's secret column decrypts under no key but ours (the environment's).
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM tournaments_bot WHERE id = %s", [bot.pk])
        (ciphertext,) = cursor.fetchone()
    assert ciphertext.startswith("gAAAAA")
    settings.ESCOBA_SECRETS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(SecretUnreadable):
        Bot.objects.get(pk=bot.pk)


@pytest.mark.django_db(transaction=True)
def test_the_sqlite_file_is_its_owner_s_alone():
    if connection.vendor != "sqlite":
        pytest.skip("only SQLite keeps the database in a file of ours")
    _register()
    for path in _database_files():
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path


# -- the secrets key --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_secrets_key_rotates_without_a_secret_ever_unreadable(user, settings):
    old = settings.ESCOBA_SECRETS_KEYS[0]
    new = Fernet.generate_key().decode()
    bot = Bot.objects.create(owner=user, name="b", url="http://127.0.0.1:9/", secret=BOT_SECRET)
    NotificationSettings.objects.create(user=user, webhook_secret=WEBHOOK_SECRET)
    NotificationSettings.objects.create(
        user=type(user).objects.create_user("no-webhook", password=USER_PASSWORD)
    )

    settings.ESCOBA_SECRETS_KEYS = [new, old]  # step 1: the new key first, the old one kept
    assert Bot.objects.get(pk=bot.pk).secret == BOT_SECRET
    call_command("secrets_rotate")

    settings.ESCOBA_SECRETS_KEYS = [new]  # step 2: the old key gone
    assert Bot.objects.get(pk=bot.pk).secret == BOT_SECRET
    assert NotificationSettings.objects.get(user=user).webhook_secret == WEBHOOK_SECRET
    assert NotificationSettings.objects.get(user__username="no-webhook").webhook_secret == ""


@pytest.mark.django_db
def test_rotating_without_the_old_key_changes_nothing_and_says_why(user, settings):
    bot = Bot.objects.create(owner=user, name="b", url="http://127.0.0.1:9/", secret=BOT_SECRET)
    old = settings.ESCOBA_SECRETS_KEYS[0]
    settings.ESCOBA_SECRETS_KEYS = [Fernet.generate_key().decode()]

    with pytest.raises(CommandError, match="ESCOBA_SECRETS_KEY"):
        call_command("secrets_rotate")

    settings.ESCOBA_SECRETS_KEYS = [old]
    assert Bot.objects.get(pk=bot.pk).secret == BOT_SECRET


# -- tokens: expiry, list, revoke -------------------------------------------------------------


@pytest.mark.django_db
def test_an_expired_token_is_refused(settings):
    token = _register()
    AuthToken.objects.update(expiry=timezone.now() - timedelta(seconds=1))

    response = _client(token).get(ME)

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


@pytest.mark.django_db
def test_a_new_token_expires_after_the_setting_s_days():
    _register()

    token = AuthToken.objects.get()
    assert token.expiry - token.created == pytest.approx(
        timedelta(days=90), abs=timedelta(seconds=5)
    )


@pytest.mark.django_db
def test_the_owner_lists_and_revokes_tokens(api_client):
    first = _register()
    second = (
        APIClient()
        .post("/api/auth/token/", {"username": "maria", "password": USER_PASSWORD})
        .json()["token"]
    )

    listed = _client(second).get(TOKENS)
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [row["current"] for row in rows] == [True, False]
    assert set(rows[0]) == {"id", "created", "expires", "current"}
    assert all(
        row["id"] not in (first, second) and first.startswith(rows[1]["id"]) for row in rows[1:]
    )

    revoked = _client(second).delete(f"{TOKENS}{rows[1]['id']}/")
    assert revoked.status_code == 204
    assert _client(first).get(ME).status_code == 401
    assert _client(second).get(ME).status_code == 200


@pytest.mark.django_db
def test_no_one_revokes_or_lists_another_s_token():
    ana = _register("ana2")
    bob = _register("bob")
    bob_id = AuthToken.objects.get(user__username="bob").token_key

    response = _client(ana).delete(f"{TOKENS}{bob_id}/")

    assert response.status_code == 404
    assert response.json()["detail"] == messages.TOKEN_NOT_FOUND
    assert _client(bob).get(ME).status_code == 200
    assert [row["id"] for row in _client(ana).get(TOKENS).json()["results"]] != [bob_id]
    assert APIClient().get(TOKENS).status_code == 401


@pytest.mark.django_db
def test_revoke_all_logs_every_token_out():
    tokens = [_register()] + [
        APIClient()
        .post("/api/auth/token/", {"username": "maria", "password": USER_PASSWORD})
        .json()["token"]
        for _ in range(2)
    ]

    response = _client(tokens[0]).post(f"{TOKENS}revoke-all/")

    assert response.status_code == 200 and response.json() == {"revoked": 3}
    assert {_client(token).get(ME).status_code for token in tokens} == {401}


@pytest.mark.django_db
def test_an_account_keeps_at_most_the_setting_s_tokens(settings, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "auth", "1000/minute")
    settings.ESCOBA_API_TOKENS_PER_USER = 3
    tokens = [_register()] + [
        APIClient()
        .post("/api/auth/token/", {"username": "maria", "password": USER_PASSWORD})
        .json()["token"]
        for _ in range(4)
    ]

    assert AuthToken.objects.count() == 3
    assert [_client(token).get(ME).status_code for token in tokens] == [401, 401, 200, 200, 200]


# -- the tokens page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_tokens_page_makes_a_token_once_and_revokes_it(client, user):
    import re

    client.force_login(user)
    made = client.post("/my/tokens/")
    assert made.status_code == 200
    key = re.search(r'data-testid="token">([0-9a-f]{64})<', made.content.decode()).group(1)
    assert _client(key).get(ME).status_code == 200

    page = client.get("/my/tokens/").content.decode()
    assert key not in page, "shown once, never again"
    token_id = AuthToken.objects.get(user=user).token_key
    assert token_id in page

    revoked = client.post(f"/my/tokens/{token_id}/revoke/", follow=True)
    assert revoked.status_code == 200
    assert _client(key).get(ME).status_code == 401


@pytest.mark.django_db
def test_the_tokens_page_revokes_only_the_owner_s_tokens(client, user):
    other = _register("someone")
    other_id = AuthToken.objects.get(user__username="someone").token_key
    client.force_login(user)

    answer = client.post(f"/my/tokens/{other_id}/revoke/", follow=True)

    assert messages.TOKEN_NOT_FOUND in answer.content.decode()
    assert _client(other).get(ME).status_code == 200
    client.post("/my/tokens/revoke-all/")
    assert _client(other).get(ME).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_tokens_given_out_before_keep_working_and_their_clear_copies_are_dropped(user):
    """The migration to hashed tokens: DRF's old table (keys in clear) is read, each key kept
    as a digest, and the table dropped."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("tournaments.migrations.0013_abuse_hashed_tokens")
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp, "
            "user_id integer)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)", [old_key, timezone.now(), user.pk]
        )
    with connection.schema_editor() as schema_editor:
        migration.move_tokens(apps, schema_editor)

    assert "authtoken_token" not in connection.introspection.table_names()
    assert old_key not in _everything_stored()
    assert _client(old_key).get(ME).json()["username"] == user.username
    assert AuthToken.objects.get().expiry is not None
