"""Helpers of the tests that start `make run` (scripts/run.py) as a process and look at its
children through /proc."""

import os
import signal
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def children_of(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def run_environment(tmp_path: Path, port: int, **extra: str) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
    }
    return environment | {"ESCOBA_DATA_DIR": str(tmp_path), "ESCOBA_PORT": str(port), **extra}


def stop_gently(
    process: subprocess.Popen, signum: int = signal.SIGINT, timeout: float = 60
) -> None:
    """Stop a run the clean way (``signum``, so it stops what it started), killed only when it
    takes longer than ``timeout`` seconds."""
    process.send_signal(signum)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
