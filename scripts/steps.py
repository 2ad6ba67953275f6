"""Run named shell steps in order, stop at the first that fails, and say which ran, how long each
took, and which were skipped: `make test` and `make test-fast` are lists of such steps.

    python -m scripts.steps "ruff=ruff check ." "tests=python -m pytest tests"

Each argument is `name=command`; the command runs under `sh -c` from the current directory.
The exit status is the failed step's, or 0.
"""

from __future__ import annotations

import subprocess
import sys
import time


def parse(arguments: list[str]) -> list[tuple[str, str]]:
    steps = []
    for argument in arguments:
        name, separator, command = argument.partition("=")
        if not separator or not name.strip() or not command.strip():
            raise SystemExit(f"steps: {argument!r} is not name=command")
        steps.append((name.strip(), command.strip()))
    return steps


def run(steps: list[tuple[str, str]]) -> int:
    """Run `steps` until one fails; print the summary; the failed step's status, or 0."""
    done: list[tuple[str, float, int]] = []
    status = 0
    started = time.monotonic()
    for name, command in steps:
        print(f"\n=== {name}: {command}", flush=True)
        step_started = time.monotonic()
        status = subprocess.run(command, shell=True).returncode
        done.append((name, time.monotonic() - step_started, status))
        if status != 0:
            break
    print(f"\n=== steps ({time.monotonic() - started:.0f} s in all)", flush=True)
    for name, seconds, code in done:
        print(f"  {'passed' if code == 0 else f'FAILED ({code})':<12} {seconds:7.1f} s  {name}")
    for name, _ in steps[len(done) :]:
        print(f"  {'skipped':<12} {'':>9}  {name} (after the failure above)")
    return status


def main() -> int:
    return run(parse(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
