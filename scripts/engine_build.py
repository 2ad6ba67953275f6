"""Compile the engine's hot modules with Cython: ``make engine-build`` (or ``python -m
scripts.engine_build``).

The modules named in ``games/engine/_build.py`` are compiled from their own ``.py`` files, typed
by the ``.pxd`` beside each, into ``games/engine/_compiled/<ABI>/``; a stamp of the sources goes
with them, and the engine only uses a build whose stamp matches (see ``_build.py``). The work is
``games/engine/_compile.py``'s, which ``pip install ./games`` runs too. Nothing is rebuilt
while the stamp matches, so calling this before every run costs a few file reads.

Without a C compiler and Python's headers, or without Cython, there is nothing to build: the
script says so and exits with status 0, and the engine runs as pure Python. A compiler that
fails is an error (status 1).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from games.engine import _build, _compile  # noqa: E402


def build(force: bool = False) -> int:
    target = _build.compiled_dir()
    if not force and _build.build_problem() is None:
        print(f"engine-build: the compiled engine in {target} is up to date")
        return 0
    problem = _compile.missing_tools()
    if problem is not None:
        print(f"engine-build: {problem}; the engine runs as pure Python")
        return 0
    started = time.monotonic()
    try:
        _compile.compile_engine(
            ROOT / "games" / "engine",
            target,
            _build.COMPILED,
            (_build.STAMP, _build.source_digest()),
            _build.extension_suffix(),
        )
    except _compile.CompileError as error:
        sys.stderr.write(f"engine-build: {error}\n")
        return 1
    elapsed = time.monotonic() - started
    print(f"engine-build: compiled {', '.join(_build.COMPILED)} into {target} in {elapsed:.0f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    return build(force=parser.parse_args().force)


if __name__ == "__main__":
    sys.exit(main())
