"""Each settings module under the environment it will meet (in a subprocess: settings load once)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, connections

from config.env import env, env_bool, env_int, env_ints, env_list

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_NAMES = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL"}
SETTINGS_NAMES |= {"ESCOBA_ALLOW_PRIVATE_BOT_URLS"}
# Production refuses short and published keys (config/secret_key.py).
PRODUCTION_KEY = "settings-test-" + "0123456789abcdefghijklmnopqrstuvwxyz" * 2
SECRETS_KEY = "jSS0JCi7ZMV_JmrK_ztJ2BCsnmOQEbW22kfEvb24uNQ="
SHOWN = ["DEBUG", "ESCOBA_ALLOW_PRIVATE_BOT_URLS", "ALLOWED_HOSTS", "SECRET_KEY"]


def load_settings(
    module: str, prelude: str = "", **environment: str
) -> subprocess.CompletedProcess:
    """Import the settings module in a clean interpreter (after ``prelude``, Python statements)
    and print a few values as JSON."""
    script = prelude + (
        "import json, django; from django.conf import settings; django.setup(); "
        "db = settings.DATABASES['default']; "
        f"print(json.dumps({{name: getattr(settings, name) for name in {SHOWN!r}}} | "
        "{'DB_ENGINE': db['ENGINE'], 'DB_NAME': str(db['NAME'])}))"
    )
    names = (
        "DEBUG",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "DATABASE_URL",
        "ESCOBA_ALLOW_PRIVATE_BOT_URLS",
        "ESCOBA_SECRETS_KEY",
    )
    base_env = {key: value for key, value in os.environ.items() if key not in names}
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=base_env | {"DJANGO_SETTINGS_MODULE": module} | environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def values(module: str, **environment: str) -> dict:
    result = load_settings(module, **environment)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_refuses_to_start_without_a_secret_key():
    result = load_settings("config.settings.production")

    assert result.returncode != 0
    assert "Set the environment variable SECRET_KEY." in result.stderr


def test_production_defaults_are_safe():
    loaded = values(
        "config.settings.production", SECRET_KEY=PRODUCTION_KEY, ESCOBA_SECRETS_KEY=SECRETS_KEY
    )

    assert loaded["DEBUG"] is False
    assert loaded["ESCOBA_ALLOW_PRIVATE_BOT_URLS"] is False
    assert loaded["ALLOWED_HOSTS"] == []


def test_local_defaults_suit_a_developer_machine():
    loaded = values("config.settings.local")

    assert loaded["DEBUG"] is True
    assert loaded["ESCOBA_ALLOW_PRIVATE_BOT_URLS"] is True
    assert loaded["DB_ENGINE"] == "django.db.backends.sqlite3"
    assert loaded["DB_NAME"].endswith("db.sqlite3")


def test_environment_overrides_the_defaults():
    loaded = values(
        "config.settings.production",
        SECRET_KEY=PRODUCTION_KEY,
        ESCOBA_SECRETS_KEY=SECRETS_KEY,
        ALLOWED_HOSTS="arena.example, api.arena.example",
        ESCOBA_ALLOW_PRIVATE_BOT_URLS="yes",
        DATABASE_URL="postgres://escoba:pw@db:5432/escoba",
    )

    assert loaded["ALLOWED_HOSTS"] == ["arena.example", "api.arena.example"]
    assert loaded["ESCOBA_ALLOW_PRIVATE_BOT_URLS"] is True
    assert loaded["DB_ENGINE"] == "django.db.backends.postgresql"
    assert loaded["DB_NAME"] == "escoba"


def test_test_settings_use_a_per_process_database_file(settings):
    test_name = settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("only SQLite needs a file name")
    # pytest-xdist's workers each add their own suffix (pytest-django), e.g. "_gw0".
    assert re.search(rf"escoba-test-{os.getpid()}\.sqlite3(_gw\d+)?$", test_name), test_name
    assert settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS is True
    assert settings.CELERY_TASK_ALWAYS_EAGER is True


def test_env_helpers(monkeypatch):
    monkeypatch.setenv("X_FLAG", "off")
    monkeypatch.setenv("X_LIST", " a, ,b ")
    monkeypatch.setenv("X_INT", "7")
    monkeypatch.delenv("X_MISSING", raising=False)

    assert env_bool("X_FLAG", default=True) is False
    assert env_bool("X_MISSING", default=True) is True
    assert env_list("X_LIST", default=[]) == ["a", "b"]
    assert env_int("X_INT", 3) == 7
    monkeypatch.setenv("X_INTS", "10000,100, 10")
    assert env_ints("X_INTS", (1, 2, 3)) == (10_000, 100, 10)
    assert env_ints("X_MISSING", (1, 2, 3)) == (1, 2, 3)
    assert env("X_MISSING", "fallback") == "fallback"
    with pytest.raises(ImproperlyConfigured, match="X_MISSING"):
        env("X_MISSING")


@pytest.mark.parametrize(("name", "value"), [("X_FLAG", "maybe"), ("X_INT", "seven")])
def test_env_helpers_reject_malformed_values(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    reader = env_bool if name == "X_FLAG" else env_int

    with pytest.raises(ImproperlyConfigured, match=name):
        reader(name, 1)


@pytest.mark.parametrize("value", ["10000,100", "10000,100,ten", "10000,-1,10"])
def test_env_ints_want_as_many_whole_numbers_as_the_default(monkeypatch, value):
    monkeypatch.setenv("X_INTS", value)

    with pytest.raises(ImproperlyConfigured, match="X_INTS must be 3 whole numbers"):
        env_ints("X_INTS", (1, 2, 3))


def test_a_python_whose_sqlite_lacks_returning_is_refused_in_our_words():
    """Storing a result is an ``UPDATE ... RETURNING``: SQLite 3.35. An older one (Debian 11 has
    3.34) is named at start-up, not found out by the first game stored."""
    old = (
        "import sqlite3; sqlite3.sqlite_version_info = (3, 34, 1); "
        "sqlite3.sqlite_version = '3.34.1'; "
    )
    result = load_settings("config.settings.local", prelude=old)

    assert result.returncode != 0
    assert "This Python uses SQLite 3.34.1; the arena needs 3.35 or later." in result.stderr
    assert values("config.settings.local")["DB_ENGINE"] == "django.db.backends.sqlite3"


@pytest.mark.django_db(transaction=True)
def test_a_reader_on_sqlite_never_holds_up_a_writers_commit():
    """The worker stores games while the web server and the beat read the same file: in WAL mode
    a commit goes through while another connection is in the middle of a read, and that reader
    goes on seeing the rows as they were when its read began."""
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL readers never block writers")
    # Connections of the test's own, as two processes would have: the one the test session
    # shares is left as it was.
    reader = connections.create_connection("default")
    writer = connections.create_connection("default")
    try:
        reader.ensure_connection()
        writer.ensure_connection()
        count = "SELECT count(*) FROM auth_group"
        reader.connection.execute("BEGIN")
        before = reader.connection.execute(count).fetchone()[0]
        # With the rollback journal this commit would wait for the reader: fail fast instead.
        writer.connection.execute("PRAGMA busy_timeout = 200")
        writer.connection.execute("INSERT INTO auth_group (name) VALUES ('writers')")

        assert writer.connection.execute(count).fetchone()[0] == before + 1
        assert reader.connection.execute(count).fetchone()[0] == before
        reader.connection.execute("COMMIT")
        assert reader.connection.execute(count).fetchone()[0] == before + 1
    finally:
        reader.close()
        writer.close()
