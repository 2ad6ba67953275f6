"""WSGI entry point, for a WSGI server (``benchmarks/api_load.py --server gunicorn``). The image and
``make run`` serve ``config/asgi.py``: the live streams need ASGI."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()
