"""Which build of the engine this process runs: compiled or pure Python, from the same source.

The hot modules (``COMPILED``) can be compiled by Cython from these very ``.py`` files, with the
C types of their fields and locals in the ``.pxd`` file beside each (``_compile.py``, which ``make
engine-build`` runs in a checkout and ``pip install ./games`` runs in the package it installs).
The extension modules land in ``_compiled/<ABI>/`` with a stamp of the sources they were built
from. When this package is imported, ``select`` puts that directory first on the package's
``__path__``, so ``from .state import Game`` finds the compiled module, but only while the stamp
still matches the sources: a stale or missing build, or no C compiler at all, leaves the
pure-Python modules in charge.

``ESCOBA_ENGINE`` chooses: ``auto`` (the default: compiled when a fresh build is there),
``python`` (never compiled) or ``compiled`` (fail with ImportError rather than fall back, so a
test run that asks for the compiled build really gets it).
"""

from __future__ import annotations

import hashlib
import os
import sysconfig
from pathlib import Path

ENV = "ESCOBA_ENGINE"
PACKAGE = "games.engine"
CHOICES = ("auto", "python", "compiled")
COMPILED = ("moves", "captures", "scoring", "state", "determinize")
STAMP = "SOURCES"
HERE = Path(__file__).resolve().parent


def compiled_dir(engine: Path = HERE) -> Path:
    """Where the compiled modules for this interpreter live (one directory per ABI) in the
    engine package at ``engine`` (this one, or its copy in a package being built)."""
    return engine / "_compiled" / (sysconfig.get_config_var("SOABI") or "unknown-abi")


def extension_suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def source_digest() -> str:
    """SHA-256 over every compiled module's ``.py`` and ``.pxd``: a build is only used while it
    matches the sources byte for byte."""
    digest = hashlib.sha256()
    for name in COMPILED:
        for suffix in (".py", ".pxd"):
            path = HERE / f"{name}{suffix}"
            digest.update(f"{name}{suffix}\0".encode())
            digest.update(path.read_bytes() if path.exists() else b"\0missing")
    return digest.hexdigest()


def build_problem() -> str | None:
    """Why the compiled build cannot be used, or None when it can."""
    directory = compiled_dir()
    stamp = directory / STAMP
    if not stamp.exists():
        return f"no compiled build in {directory} ({_HOW})"
    if stamp.read_text(encoding="utf-8").strip() != source_digest():
        return f"the compiled build is older than the engine sources ({_HOW})"
    missing = [n for n in COMPILED if not (directory / f"{n}{extension_suffix()}").exists()]
    if missing:
        return f"the compiled build lacks {', '.join(missing)} ({_HOW})"
    return None


_HOW = (
    "`make engine-build` in a checkout, or `pip install ./games` again, makes one where a C "
    "compiler and Python's headers are"
)


def select(package_name: str, package_path: list[str]) -> tuple[str, str]:
    """Choose the build for this process and return ``(build, why)``; ``build`` is ``compiled``
    or ``python``. Must run before any engine module is imported."""
    wanted = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if wanted not in CHOICES:
        raise ImportError(f"{ENV} must be one of {', '.join(CHOICES)}, not {wanted!r}")
    if wanted == "python":
        return "python", f"{ENV}=python"
    if package_name != PACKAGE:
        # The extension modules are compiled as games.engine.*; the same files loaded under
        # another name would share their C globals with the real ones.
        return "python", f"the compiled build only serves {PACKAGE}, not {package_name}"
    problem = build_problem()
    if problem is None:
        package_path.insert(0, str(compiled_dir()))
        return "compiled", f"Cython build in {compiled_dir()}"
    if wanted == "compiled":
        raise ImportError(f"{ENV}=compiled, but {problem}")
    return "python", problem
