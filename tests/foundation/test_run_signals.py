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
from tests.foundation.run_processes import ROOT, alive, children_of, run_environment

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


def test_make_run_in_the_background_stops_on_sigterm_and_its_supervisor_on_sigint(tmp_path):
    """``make run`` with SIGINT ignored: ``kill -TERM`` of make stops it all; the supervisor
    alone (``python -m scripts.run``, as make runs it), on SIGINT. The demo is off: quicker."""
    environment = run_environment(tmp_path, free_port(), ESCOBA_DEMO="0")
    log_path = tmp_path / "run.out"
    log_path.touch()
    with open(log_path, "ab") as log:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "run"],
            cwd=ROOT, env=environment, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, preexec_fn=ignore_sigint,
        )  # fmt: skip
    processes: set[int] = set()
    try:
        started(make, log_path, 1)
        supervisor = supervisor_of(make)
        processes = descendants(make.pid)
        # redis-server, worker, beat, web (and the supervisor and whatever they started)
        assert len(children_of(supervisor)) == 4
        make.send_signal(signal.SIGTERM)
        stopped(make, processes)
    finally:
        for pid in processes:
            if alive(pid):
                subprocess.run(["kill", "-KILL", str(pid)], check=False)
    assert "[escoba] stopping web" in log_path.read_text()
    assert log_path.read_text().rstrip().count("[escoba] stopped") == 1

    with open(log_path, "ab") as log:
        supervisor_process = subprocess.Popen(
            [sys.executable, "-m", "scripts.run"],
            cwd=ROOT, env=environment, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, preexec_fn=ignore_sigint,
        )  # fmt: skip
    processes = set()
    try:
        started(supervisor_process, log_path, 2)
        processes = descendants(supervisor_process.pid)
        assert len(children_of(supervisor_process.pid)) == 4
        supervisor_process.send_signal(signal.SIGINT)
        assert stopped(supervisor_process, processes) == 0
    finally:
        for pid in processes:
            if alive(pid):
                subprocess.run(["kill", "-KILL", str(pid)], check=False)
    assert log_path.read_text().count("[escoba] stopped") == 2
