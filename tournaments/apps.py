import os
from typing import Any

from django.apps import AppConfig
from django.db.backends.signals import connection_created

# The SQLite file and its journal files: the owner's alone, since the database holds password
# hashes and encrypted secrets (docs/security.md; scripts/run.py makes ESCOBA_DATA_DIR 0700).
DATABASE_FILE_MODE = 0o600


def restrict_sqlite_files(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Make a SQLite database file readable by its owner only, whoever created it first."""
    if connection.vendor != "sqlite":
        return
    name = str(connection.settings_dict["NAME"])
    if name == ":memory:" or name.startswith("file:"):
        return
    for path in (name, f"{name}-wal", f"{name}-shm", f"{name}-journal"):
        try:
            if os.stat(path).st_mode & 0o077:
                os.chmod(path, DATABASE_FILE_MODE)
        except FileNotFoundError:
            continue
        except PermissionError:  # another user's file: not ours to change
            continue


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Tournaments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        connection_created.connect(restrict_sqlite_files, dispatch_uid="restrict_sqlite_files")
