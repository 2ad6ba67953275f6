"""Saved test databases for ``saved_database`` (tests/browser/conftest.py): a setup that plays a
league runs once, and later tests get a copy of the database it left.

SQLite only (the suite's browser tests run on it): its backup API copies a database page by page,
sequence counters included, so a restored database is the saved one exactly.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class SavedDatabase:
    """A test database as a setup left it (an in-memory SQLite copy), and what the setup
    returned (primary keys and plain values, read again from the copy)."""

    image: sqlite3.Connection
    value: object


def database_is_empty() -> bool:
    """Nothing of a test's own yet (a flushed database): a saved one may replace it whole."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from tournaments.models import Bot, League

    return connection.vendor == "sqlite" and not any(
        model.objects.exists() for model in (get_user_model(), Bot, League)
    )


def database_copy(*, to_image: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """Copy the test database into a new in-memory image, or ``to_image`` back into it; the
    live server's and this thread's connections see a restored one at their next statement
    (SQLite notices the file changed)."""
    from django.contrib.contenttypes.models import ContentType
    from django.db import connection

    connection.ensure_connection()
    assert connection.get_autocommit(), "a database is copied outside transactions only"
    if to_image is None:
        image = _memory()
        connection.connection.backup(image)
        return image
    to_image.backup(connection.connection)
    ContentType.objects.clear_cache()  # their ids are the saved ones now
    return to_image


def _memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", check_same_thread=False)


class SavedDatabases:
    """The databases saved in this test process and, under pytest-xdist, in files every worker
    of the run reads (``shared``): a league is played once per run, not once per worker.

    Each key has a lock file there: while one worker builds a key's database, another that needs
    it waits for it instead of building it too."""

    def __init__(self, shared: Path | None) -> None:
        self.shared = shared
        self.saved: dict[object, SavedDatabase] = {}

    def close(self) -> None:
        for database in self.saved.values():
            database.image.close()

    @contextmanager
    def claim(self, key: object) -> Iterator[SavedDatabase | None]:
        """The database saved for ``key``, or None: then the caller builds it and ``keep``s it
        inside this block, with the key's lock held."""
        if key in self.saved or self.shared is None:
            yield self.saved.get(key)
            return
        path = self._path(key)
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if path.exists():
                    source, image = sqlite3.connect(path), _memory()
                    source.backup(image)
                    source.close()
                    value = json.loads(path.with_suffix(".json").read_text())
                    self.saved[key] = SavedDatabase(image=image, value=value)
                yield self.saved.get(key)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def keep(self, key: object, database: SavedDatabase) -> None:
        self.saved[key] = database
        if self.shared is None:
            return
        path = self._path(key)
        path.with_suffix(".json").write_text(json.dumps(database.value))
        partial = path.with_suffix(".partial")
        target = sqlite3.connect(partial)
        database.image.backup(target)
        target.close()
        os.replace(partial, path)  # whole or absent: the image is written last

    def _path(self, key: object) -> Path:
        return self.shared / hashlib.sha256(repr(key).encode()).hexdigest()[:20]
