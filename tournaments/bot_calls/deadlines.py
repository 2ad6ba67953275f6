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

Timers: a league worker enters a deadline for every move, and nearly every call ends long before
it. An `asyncio` timer per call (made, pushed on the loop's heap, cancelled, swept out later) cost
the worker about a tenth of its CPU a move. So the deadlines of one loop share one timer
(`_Watch`): deadlines of the same length fall due in the order they began, so each length keeps
a queue in that order, and the one timer is set for the earliest deadline still open. When it
fires, the deadlines that ended are dropped from the queues' fronts, those now due are judged,
and the timer is set again; a call that ends only marks its deadline done. Each deadline is
still judged at its own time, as a timer of its own would judge it.

Clocks: a deadline is judged on `time.monotonic`, never on the loop's clock. uvloop's timers
count whole milliseconds from the time its loop turn began, so one may fire a millisecond or
more before the deadline; a call cut then would lose part of the time it was promised. A timer
that fires early finds nothing due and is set again for what is left.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from types import TracebackType

# How late the deadline's check may run and still be on time: a busy but healthy loop (dozens of
# games, each turn a few engine steps and JSON bodies) runs its timers within a few ms.
LATE_S = 0.025
# What a stalled call gets after the loop wakes: a reply already in the socket is read within a
# few loop turns; this is ample for that and short for a bot that really is late.
GRACE_S = 0.05
MAX_GRACES = 4


class _Watch:
    """The open deadlines of one event loop and their one timer (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        # Deadlines by length (seconds), each queue in the order they fall due.
        self._queues: dict[float, deque[CallDeadline]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = math.inf

    def add(self, deadline: CallDeadline, length: float) -> None:
        queue = self._queues.get(length)
        if queue is None:
            queue = self._queues[length] = deque()
        queue.append(deadline)
        if deadline.due < self._timer_due:
            self._set(deadline.due)

    def _set(self, due: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_due = due
        # On the loop's clock (uvloop's call_later counts from its turn's start, maybe stale).
        self._timer = self.loop.call_at(self.loop.time() + due - time.monotonic(), self._fire)

    def _fire(self) -> None:
        self._timer, self._timer_due = None, math.inf
        now = time.monotonic()
        due_now: list[CallDeadline] = []
        for length, queue in list(self._queues.items()):
            while queue and (queue[0].done or queue[0].due <= now):
                deadline = queue.popleft()
                if not deadline.done:
                    due_now.append(deadline)
            if not queue:
                del self._queues[length]
        for deadline in due_now:
            deadline.judge(now)
        earliest = min((queue[0].due for queue in self._queues.values()), default=math.inf)
        if earliest < self._timer_due:
            self._set(earliest)


# Each thread's watch, for the loop it runs (a thread runs one loop at a time). Another loop on
# the thread gets a new watch; the old one still serves the deadlines it holds, so this never
# decides which timer judges a deadline, only how many loops share one.
_local = threading.local()


def _watch(loop: asyncio.AbstractEventLoop) -> _Watch:
    watch = getattr(_local, "watch", None)
    if watch is None or watch.loop is not loop:
        watch = _local.watch = _Watch(loop)
    return watch


class CallDeadline:
    """`async with CallDeadline(seconds):` raises `TimeoutError` when the block runs past the
    deadline on a loop that was on time; see the module docstring.

    It cancels its task and turns that cancellation into `TimeoutError` exactly as
    `asyncio.timeout` does (`Task.cancelling`/`uncancel`, so a cancellation from elsewhere stays
    one), on its loop's shared timer rather than a timer and an `asyncio.Timeout` of its own.
    """

    __slots__ = ("_timeout_s", "_watch", "_task", "_cancelling", "_expired", "due", "done",
                 "graces")  # fmt: skip

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self.graces = 0
        self._expired = False
        self.done = False
        self.due = math.inf

    async def __aenter__(self) -> CallDeadline:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("CallDeadline is used inside a task")
        self._task: asyncio.Task | None = task
        self._cancelling = task.cancelling()
        self._watch = _watch(loop)
        self.due = time.monotonic() + self._timeout_s
        self._watch.add(self, self._timeout_s)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        self.done = True
        task, self._task = self._task, None  # the queue may hold this a while: not the task
        # As `asyncio.Timeout.__aexit__`: our cancel is taken back whatever the block raised;
        # it becomes `TimeoutError` unless someone else cancelled the task too.
        if self._expired and task is not None and task.uncancel() <= self._cancelling:
            if exc_type is asyncio.CancelledError:
                raise TimeoutError from exc
        return None

    def judge(self, now: float) -> None:
        """At the deadline (the watch calls it): cut the call off, or give it a grace when the
        loop was too late to tell."""
        if self.done or self._task is None:
            return
        if now - self.due > LATE_S and self.graces < MAX_GRACES:
            self.graces += 1
            self.due = now + GRACE_S
            self._watch.add(self, GRACE_S)
        else:
            self._expired = True
            self._task.cancel()
