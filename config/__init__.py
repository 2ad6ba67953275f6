"""Project configuration: settings, URLs and the Celery app.

Importing the Celery app here makes ``@shared_task`` bind to it in every process Django starts.
"""

from .celery_app import app as celery_app

__all__ = ["celery_app"]
