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

# Collect the youngest generation after this many new container objects instead of CPython's
# 700. A games worker makes tens of them a move (request bodies kept for diagnostics, the caller's
# objects, the event loop's), so with the default it collected about 50 times a second.
WORKER_GC_THRESHOLD = (10_000, 20, 10)


@worker_ready.connect
def settle_garbage_collector(**kwargs: object) -> None:
    """Once a worker has started, move everything it loaded (Django, Celery, the task modules:
    some 150,000 objects) out of the garbage collector's sight with ``gc.freeze`` and collect
    less often. Those objects live as long as the process, yet every full collection walked
    them: measured in a league with fast bots, the collector took 1.3-1.7 s of a worker's 7.5-10
    s of CPU, and 0.34-0.37 s after this (``docs/benchmarks.md``, "The worker's garbage
    collector"). Cycles made later are still collected."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLD)
