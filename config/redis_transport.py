"""kombu's Redis transport, fixed so that a worker survives Redis dying under it.

The setting ``CELERY_BROKER_TRANSPORT`` names this module's ``Transport``; everything else is
kombu 5.7.0's ``kombu.transport.redis``.

The defect (seen as ``Unrecoverable error: AttributeError("'NoneType' object has no attribute
'hostname'")`` in ``_connparams``, right after "Restoring N unacknowledged message(s)", and the
worker exiting): when the worker notices that the broker connection broke, Celery's consumer
calls ``Connection.collect()`` and then ``Connection.close()`` on it
(``celery.worker.consumer.Consumer.on_connection_error_after_connected``).

1. ``collect()`` closes the channels. A channel with a ``BRPOP`` in flight first reads its reply
   (``Channel.close`` calls ``_brpop_read``); Redis is gone, so that read raises
   ``ConnectionError`` before the channel marks itself closed. The exception ends the loop in
   ``Transport.close_connection``, leaving the channels after it open too, and ``collect()``
   swallows it and drops the transport's connection details (``transport.client = None``).
2. ``close()`` then closes the still-open task channel again. It has unacknowledged messages
   (acks_late tasks in progress), so it restores them to the queue; that needs a new connection
   pool, built from ``transport.client``, which is now None: ``AttributeError``. It is not one
   of the connection errors Celery recovers from, so the consumer gives up and the worker stops.

Whether it happens depends on which socket notices the broken connection first (a channel other
than the one reading must have its ``BRPOP`` in flight), hence "2 times in 3" on a busy worker.
Two changes, each enough on its own:

- ``Channel.close`` drains an in-flight ``BRPOP`` itself and ignores a connection error there,
  so the close always completes (there is nothing to read from a dropped connection);
- ``Channel._connparams`` raises ``redis.exceptions.ConnectionError`` instead of
  ``AttributeError`` when the channel's connection was already closed, so any other path that
  reaches it meets the error type Celery handles (reconnect, or "Couldn't ack" and move on).

Unacknowledged messages that could not be restored stay in Redis's unacked index, where kombu's
``restore_visible`` finds them after the visibility timeout; the matches' own recovery (worker
restart, beat sweep) does not wait that long. ``tests/reliability/test_redis_restart.py`` checks
both the closing sequence and a league under repeated Redis kills.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty


class Channel(kombu_redis.Channel):
    def close(self) -> None:
        if self._in_poll and not self.closed:
            try:
                self._brpop_read()
            except Empty:
                pass
            except self.connection_errors:
                pass  # the connection is gone: nothing to drain, go on closing
        super().close()

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise redis.exceptions.ConnectionError(
                "this broker channel's connection was closed; a new connection is needed"
            )
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
