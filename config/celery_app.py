"""The Celery application shared by the worker, beat and the web process.

It reads every option from Django settings under the ``CELERY_`` prefix, so the settings modules
are the one place where broker, serialisation and time limits are decided.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("escoba")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
