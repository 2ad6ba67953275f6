"""A call's deadline that does not charge a bot for the service's own stalls.

An event loop looks at a deadline only when it runs. When our process stalls across a call's
deadline (a long garbage collection, a core taken by other work, a paused VM), the loop wakes
late with the bot's reply waiting in the socket, and a plain `asyncio.timeout` cancels the call
in that same turn, before the reply is read: the bot would be charged a `timeout` for our stall.

`CallDeadline` judges a call only on a loop that is on time. At the deadline it looks at how
late it runs: on time, the call is cut off as `asyncio.timeout` would; more than `LATE_S` late,
the loop was not looking, so the call gets `GRACE_S` more to read what had already come, and is
judged again then (at most `MAX_GRACES` times, so a loop that keeps stalling still ends its
calls). When we stalled, the bot has the benefit of the doubt: a reply that came while we were
not looking is taken, even one that may have come a little after the deadline.

A stall that ends before the deadline needs nothing: the loop reads the reply when it wakes.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

# How late the deadline's check may run and still be on time: a busy but healthy loop (dozens of
# games, each turn a few engine steps and JSON bodies) runs its timers within a few ms.
LATE_S = 0.025
# What a stalled call gets after the loop wakes: a reply already in the socket is read within a
# few loop turns; this is ample for that and short for a bot that really is late.
GRACE_S = 0.05
MAX_GRACES = 4


class CallDeadline:
    """`async with CallDeadline(seconds):` raises `TimeoutError` when the block runs past the
    deadline on a loop that was on time; see the module docstring.

    It cancels its task and turns that cancellation into `TimeoutError` exactly as
    `asyncio.timeout` does (`Task.cancelling`/`uncancel`, so a cancellation from elsewhere stays
    one), with one timer and no `asyncio.Timeout` under it: a league worker enters one for every
    move, and the nested timeout cost it about as much CPU as the timer itself.
    """

    __slots__ = ("_timeout_s", "_loop", "_task", "_cancelling", "_expired", "_check", "graces")

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self.graces = 0
        self._expired = False

    async def __aenter__(self) -> CallDeadline:
        self._loop = loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("CallDeadline is used inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        due = loop.time() + self._timeout_s
        self._check = loop.call_at(due, self._judge, due)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        self._check.cancel()
        # As `asyncio.Timeout.__aexit__`: our cancel is taken back whatever the block raised;
        # it becomes `TimeoutError` unless someone else cancelled the task too.
        if self._expired and self._task.uncancel() <= self._cancelling:
            if exc_type is asyncio.CancelledError:
                raise TimeoutError from exc
        return None

    def _judge(self, due: float) -> None:
        now = self._loop.time()
        if now - due > LATE_S and self.graces < MAX_GRACES:
            self.graces += 1
            self._check = self._loop.call_at(now + GRACE_S, self._judge, now + GRACE_S)
        else:
            self._expired = True
            self._task.cancel()
