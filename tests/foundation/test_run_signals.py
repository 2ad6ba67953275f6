"""Stopping ``make run`` started in the background (issue 39).

A shell starts a background job (``make run &``, a script's job) with SIGINT ignored, and the
processes it starts inherit that. The supervisor (scripts/run.py) sets its own SIGINT and SIGTERM
handlers, so either signal still stops it and every process it started; GNU make keeps an
ignored SIGINT ignored, but passes SIGTERM on to its recipe, so ``kill -TERM`` of make stops the
run (README.md, "The two commands").
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.private_redis import free_port
from tests.foundation.run_processes import (
    ROOT,
    alive,
    children_of,
    run_environment,
    stop_gently,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def ignore_sigint() -> None:
    """What a shell does for a job it starts in the background."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for child in children_of(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def started(process: subprocess.Popen, log_path: Path, nth: int) -> None:
    deadline = time.monotonic() + 150
    while log_path.read_text().count("press Ctrl-C") < nth:
        assert process.poll() is None, log_path.read_text()[-5000:]
        assert time.monotonic() < deadline, log_path.read_text()[-5000:]
        time.sleep(0.3)


def supervisor_of(make: subprocess.Popen) -> int:
    for pid in descendants(make.pid):
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"scripts.run" in cmdline:
            return pid
    raise AssertionError("make started no supervisor")


def stopped(process: subprocess.Popen, processes: set[int]) -> int:
    """Wait for `process` to exit; then none of `processes` may be left."""
    try:
        code = process.wait(90)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 5
    while [pid for pid in processes if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in processes if alive(pid)], "processes left running"
    return code


def launch(command: list[str], environment: dict[str, str], log_path: Path) -> subprocess.Popen:
    """Start ``command`` as a background job (SIGINT ignored), its output to ``log_path``."""
    log_path.touch()
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            command, cwd=ROOT, env=environment, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, preexec_fn=ignore_sigint,
        )  # fmt: skip


def test_make_run_in_the_background_stops_on_sigterm_and_its_supervisor_on_sigint(tmp_path):
    """``make run`` with SIGINT ignored: ``kill -TERM`` of make stops it all; the supervisor
    alone (``python -m scripts.run``, as make runs it), on SIGINT. The demo is off: quicker.
    The two runs start at once, each in a data directory and on a port of its own, so their
    start-ups overlap instead of following each other."""
    make_dir, alone_dir = tmp_path / "make", tmp_path / "alone"
    make_log, alone_log = make_dir / "run.out", alone_dir / "run.out"
    make_dir.mkdir()
    alone_dir.mkdir()
    make = launch(
        ["make", "--no-print-directory", "run"],
        run_environment(make_dir, free_port(), ESCOBA_DEMO="0"),
        make_log,
    )
    supervisor_process = launch(
        [sys.executable, "-m", "scripts.run"],
        run_environment(alone_dir, free_port(), ESCOBA_DEMO="0"),
        alone_log,
    )
    processes: set[int] = set()
    try:
        started(make, make_log, 1)
        started(supervisor_process, alone_log, 1)
        supervisor = supervisor_of(make)
        make_processes = descendants(make.pid)
        alone_processes = descendants(supervisor_process.pid)
        processes = make_processes | alone_processes
        # redis-server, worker, beat, web (and the supervisor and whatever they started)
        assert len(children_of(supervisor)) == 4
        assert len(children_of(supervisor_process.pid)) == 4
        make.send_signal(signal.SIGTERM)
        stopped(make, make_processes)
        supervisor_process.send_signal(signal.SIGINT)
        assert stopped(supervisor_process, alone_processes) == 0
    finally:
        for process in (make, supervisor_process):  # a failed assertion: stop it the clean way
            if process.poll() is None:
                stop_gently(process, signal.SIGTERM)
        for pid in processes:
            if alive(pid):
                subprocess.run(["kill", "-KILL", str(pid)], check=False)
    assert "[escoba] stopping web" in make_log.read_text()
    assert make_log.read_text().rstrip().count("[escoba] stopped") == 1
    assert alone_log.read_text().count("[escoba] stopped") == 1
