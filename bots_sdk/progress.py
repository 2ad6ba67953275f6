"""A progress bar on a terminal, a few plain lines elsewhere: no dependency, stderr only.

On a terminal the bar is redrawn in place (`\r`); piped into a file or a CI log it would be one
unreadable line of carriage returns, so there it writes a line at every tenth of the way.
"""

from __future__ import annotations

import time
from typing import TextIO

WIDTH = 30


class Progress:
    """Call it with (done, total) after each step; `finish()` ends the bar's line."""

    def __init__(self, stream: TextIO, *, label: str = "", tty: bool | None = None) -> None:
        self.stream = stream
        self.label = label
        self.tty = stream.isatty() if tty is None else tty
        self.started = time.monotonic()
        self.last_tenth = -1
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        elapsed = time.monotonic() - self.started
        if self.tty:
            filled = WIDTH * done // total
            bar = "#" * filled + "-" * (WIDTH - filled)
            eta = elapsed / done * (total - done) if done else 0.0
            self.stream.write(
                f"\r[{bar}] {done}/{total} {self.label} {elapsed:.0f}s, about {eta:.0f}s left "
            )
            self.drawn = True
        else:
            tenth = 10 * done // total
            if tenth == self.last_tenth:
                return
            self.last_tenth = tenth
            self.stream.write(f"{done}/{total} {self.label} ({elapsed:.0f}s)\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
