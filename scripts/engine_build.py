"""Compile the engine's hot modules with Cython: ``make engine-build`` (or ``python -m
scripts.engine_build``).

The modules named in ``games/engine/_build.py`` are compiled from their own ``.py`` files, typed
by the ``.pxd`` beside each, into ``games/engine/_compiled/<ABI>/``; a stamp of the sources goes
with them, and the engine only uses a build whose stamp matches (see ``_build.py``). Nothing is
rebuilt while the stamp matches, so calling this before every run costs a few file reads.

Without a C compiler or without Cython there is nothing to build: the script says so and exits
with status 0, and the engine runs as pure Python. A compiler that fails is an error (status 1).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from games.engine import _build  # noqa: E402

# Cython's options for every module: the .pxd gives the C types, so Python annotations must not
# (a `seat: int` argument would otherwise reject what the pure build accepts), and the module
# keeps Python's semantics (division, bounds checks, negative indices) everywhere.
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "embedsignature": True}


def compiler_command() -> list[str] | None:
    """The command that compiles and links one extension module, or None without a compiler."""
    ldshared = sysconfig.get_config_var("LDSHARED")
    if not ldshared:
        return None
    command = shlex.split(ldshared)
    if shutil.which(command[0]) is None:
        return None
    include = sysconfig.get_paths()["include"]
    return [*command, *shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC"),
            "-O2", "-DNDEBUG", "-fwrapv", "-w", f"-I{include}"]  # fmt: skip


def build(force: bool = False) -> int:
    target = _build.compiled_dir()
    if not force and _build.build_problem() is None:
        print(f"engine-build: the compiled engine in {target} is up to date")
        return 0
    command = compiler_command()
    if command is None:
        print("engine-build: no C compiler found; the engine runs as pure Python")
        return 0
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("engine-build: Cython is not installed (requirements/local.txt); pure Python it is")
        return 0
    started = time.monotonic()
    digest = _build.source_digest()
    engine = ROOT / "games" / "engine"
    with tempfile.TemporaryDirectory(prefix="escoba-engine-build-") as scratch:
        work = Path(scratch)
        # Cython names a module after its package path, so it translates a copy laid out as
        # games/engine/*.py; the copy also keeps generated C files out of the source tree.
        package = work / "games" / "engine"
        package.mkdir(parents=True)
        (work / "games" / "__init__.py").write_text("")
        (package / "__init__.py").write_text("")
        for name in _build.COMPILED:
            for suffix in (".py", ".pxd"):
                source = engine / f"{name}{suffix}"
                if source.exists():
                    shutil.copy2(source, package / source.name)
        sources = [str(package / f"{name}.py") for name in _build.COMPILED]
        cythonize(sources, compiler_directives=DIRECTIVES, quiet=True, force=True)
        suffix = _build.extension_suffix()

        def compile_one(name: str) -> tuple[str, subprocess.CompletedProcess[str]]:
            output = package / f"{name}{suffix}"
            process = subprocess.run(
                [*command, str(package / f"{name}.c"), "-o", str(output)],
                capture_output=True,
                text=True,
            )
            return name, process

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(compile_one, _build.COMPILED))
        failed = [(name, process) for name, process in results if process.returncode != 0]
        for name, process in failed:
            sys.stderr.write(f"engine-build: compiling {name} failed:\n{process.stderr}\n")
        if failed:
            return 1
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in _build.COMPILED:
            shutil.copy2(package / f"{name}{suffix}", target / f"{name}{suffix}")
        # The stamp is written last: a build cut short is never taken for a complete one.
        (target / _build.STAMP).write_text(digest + "\n", encoding="utf-8")
    elapsed = time.monotonic() - started
    print(f"engine-build: compiled {', '.join(_build.COMPILED)} into {target} in {elapsed:.0f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    return build(force=parser.parse_args().force)


if __name__ == "__main__":
    sys.exit(main())
