"""ASGI entry point: the whole site under uvicorn (``make run``, compose ``web``).

The live streams (web/game_streams.py, web/page_streams.py) are async views that hold a
connection open for minutes; under ASGI they cost a coroutine each, not a worker. The other
views are synchronous and run in Django's thread as they would under WSGI
(docs/architecture.md, "Live games").
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
# Each request runs in a thread of its own here: PostgreSQL connections come from a pool, not one
# new session per request (config/settings/base.py, ESCOBA_DB_POOL).
os.environ.setdefault("ESCOBA_DB_POOL", "1")

application = get_asgi_application()
