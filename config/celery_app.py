"""The Celery application shared by the worker, beat and the web process.

It reads every option from Django settings under the ``CELERY_`` prefix, so the settings modules
are the one place where broker, serialisation and time limits are decided.
"""

import gc
import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("escoba")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def settle_garbage_collector(**kwargs: object) -> None:
    """Once a worker has started, move everything it loaded (Django, Celery, the task modules:
    some 150,000 objects) out of the garbage collector's sight with ``gc.freeze`` and collect
    less often. Those objects live as long as the process, yet every full collection walked
    them: measured in a league with fast bots, the collector took 1.3-1.7 s of a worker's 7.5-10
    s of CPU, and 0.34-0.37 s after this (``docs/benchmarks.md``, "The worker's garbage
    collector"). Cycles made later are still collected.

    The thresholds are ``ESCOBA_WORKER_GC_THRESHOLD``. A games worker makes tens of containers a
    move (the request bodies kept for diagnostics, the caller's objects, the event loop's): with
    CPython's 700 it collected about 50 times a second. The middle one is high because the second
    generation's collections walked every request body a game keeps until it ends, for 5-10 us a
    move; at 100 most games have ended and been let go before one comes round."""
    from django.conf import settings

    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.ESCOBA_WORKER_GC_THRESHOLD)
