"""Compiling the engine's hot modules with Cython, for ``make engine-build`` and for
``pip install ./games`` alike.

One function does it for both, so a checkout and an installed package get the same build: the
modules named in ``_build.COMPILED``, translated from their own ``.py`` files with the C types
of the ``.pxd`` beside each, compiled and linked into one directory with a stamp of the sources
(see ``_build.py``, which only uses a build whose stamp matches).

It is loaded by file path from ``games/setup.py`` (the package is not importable while it is
being built), so it imports nothing of the package: what it needs of ``_build`` comes in as
arguments. Cython is imported only when a build runs; it is a build requirement, not a
dependency of the installed package.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Cython's options for every module: the .pxd gives the C types, so Python annotations must not
# (a `seat: int` argument would otherwise reject what the pure build accepts), and the module
# keeps Python's semantics (division, bounds checks, negative indices) everywhere.
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "embedsignature": True}


class CompileError(Exception):
    """The C compiler failed on a module; the message carries its output."""


def compiler_command() -> list[str] | None:
    """The command that compiles and links one extension module, or None when there is no
    compiler or no Python headers to compile against."""
    ldshared = sysconfig.get_config_var("LDSHARED")
    if not ldshared:
        return None
    command = shlex.split(ldshared)
    if shutil.which(command[0]) is None:
        return None
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return None
    return [*command, *shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC"),
            "-O2", "-DNDEBUG", "-fwrapv", "-w", f"-I{include}"]  # fmt: skip


def missing_tools() -> str | None:
    """Why no compiled build can be made here (no compiler, no headers, no Cython), or None."""
    if compiler_command() is None:
        return "no C compiler with Python's headers found"
    try:
        import Cython.Build  # noqa: F401
    except ImportError:
        return "Cython is not installed"
    return None


def compile_engine(
    engine: Path,
    target: Path,
    names: Sequence[str],
    stamp: tuple[str, str],
    suffix: str,
) -> None:
    """Compile ``names`` from the sources in ``engine`` into ``target`` (replaced whole), and
    write ``stamp`` (file name, digest) last, so that a build cut short is never taken for a
    complete one. Raises ``CompileError`` when the compiler fails; the caller has checked
    ``missing_tools()``."""
    from Cython.Build import cythonize

    command = compiler_command()
    assert command is not None, "compile_engine needs a compiler: see missing_tools()"
    with tempfile.TemporaryDirectory(prefix="escoba-engine-build-") as scratch:
        # Cython names a module after its package path, so it translates a copy laid out as
        # games/engine/*.py; the copy also keeps generated C files out of the source tree.
        package = Path(scratch) / "games" / "engine"
        package.mkdir(parents=True)
        (package.parent / "__init__.py").write_text("")
        (package / "__init__.py").write_text("")
        for name in names:
            for source_suffix in (".py", ".pxd"):
                source = engine / f"{name}{source_suffix}"
                if source.exists():
                    shutil.copy2(source, package / source.name)
        sources = [str(package / f"{name}.py") for name in names]
        cythonize(sources, compiler_directives=DIRECTIVES, quiet=True, force=True)

        def compile_one(name: str) -> tuple[str, subprocess.CompletedProcess[str]]:
            output = package / f"{name}{suffix}"
            process = subprocess.run(
                [*command, str(package / f"{name}.c"), "-o", str(output)],
                capture_output=True,
                text=True,
            )
            return name, process

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(compile_one, names))
        failed = [(name, process) for name, process in results if process.returncode != 0]
        if failed:
            raise CompileError(
                "\n".join(f"compiling {name} failed:\n{process.stderr}" for name, process in failed)
            )
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in names:
            shutil.copy2(package / f"{name}{suffix}", target / f"{name}{suffix}")
        stamp_name, digest = stamp
        (target / stamp_name).write_text(digest + "\n", encoding="utf-8")
