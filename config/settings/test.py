"""Settings for pytest (``--ds=config.settings.test``): fast, isolated, eager Celery by default.

The test database is a *file* even with SQLite, so that a real Celery worker process started by
the ``celery_worker_process`` fixture (tests/conftest.py) sees the rows a test committed. The file
name carries the pid so several pytest runs on one machine never share it.
"""

import os
import tempfile
from pathlib import Path

from config.env import env, env_bool, env_list
from config.secret_key import DEV_SECRETS_KEY

from .base import *  # noqa: F403
from .base import DATABASES

DEBUG = False
SECRET_KEY = env("SECRET_KEY", "test-only-insecure-key")
ESCOBA_SECRETS_KEYS = env_list("ESCOBA_SECRETS_KEY", default=[DEV_SECRETS_KEY])
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
ESCOBA_ALLOW_PRIVATE_BOT_URLS = env_bool("ESCOBA_ALLOW_PRIVATE_BOT_URLS", default=True)

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"escoba-test-{os.getpid()}.sqlite3")
    }
    # The service's pragmas (WAL), then a commit that never waits for the disk (no fsync at all):
    # a test database never has to outlive a power cut, and a killed worker's commits are still
    # kept (the OS has them). On a busy disk the fsyncs were most of the time of the tests that
    # write. The later pragma wins.
    DATABASES["default"]["OPTIONS"]["init_command"] += "; PRAGMA synchronous=OFF"

# Static files straight from the app folders, as in local; nothing is collected for tests.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True

# Throttle counters live in this process only; tests/conftest.py clears them before each test.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Cached reads are off: this cache is per process, so a page served by a test's web server would
# never see the versions a real worker process bumps (in production both share Redis). The
# read-cache tests turn it on (tests/performance/test_read_cache.py).
ESCOBA_READ_CACHE_S = 0
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

# Unit tests run tasks in-process; the worker started by the integration fixture sets
# ESCOBA_CELERY_EAGER=0 so tasks it runs enqueue their follow-ups on the real broker.
CELERY_TASK_ALWAYS_EAGER = env_bool("ESCOBA_CELERY_EAGER", default=True)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BEAT_SCHEDULE_FILENAME = str(Path(tempfile.gettempdir()) / "escoba-test-celerybeat")
# The even terms' frozen mean from a few deals: tests check how it is used, not its precision
# (tests/ratings/test_baseline_even.py checks a mean against other random deals).
ESCOBA_BASELINE_MEAN_DEALS = 8

# Eager tasks would refill the ladder from inside the set that just ended, again and again; the
# worker of the integration fixture (ESCOBA_CELERY_EAGER=0) refills as in production.
ESCOBA_LADDER_REFILL_ON_RESULT = env_bool(
    "ESCOBA_LADDER_REFILL_ON_RESULT", default=not CELERY_TASK_ALWAYS_EAGER
)
