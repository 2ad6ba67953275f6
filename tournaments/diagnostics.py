"""Small Celery tasks that prove the plumbing works end to end (health checks, tests)."""

import socket

from celery import shared_task
from django.contrib.auth import get_user_model


@shared_task(name="diagnostics.ping", acks_late=True)
def ping(username: str | None = None) -> dict:
    """Answer from inside a worker, reading the database the caller wrote to.

    Returns the worker's host name, the number of users and whether ``username`` exists, so a
    caller can tell that the task ran in a process that sees its committed rows.
    """
    users = get_user_model().objects
    return {
        "pong": True,
        "host": socket.gethostname(),
        "users": users.count(),
        "found": bool(username) and users.filter(username=username).exists(),
    }
