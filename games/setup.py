"""Building the ``games`` package: ``pip install ./games`` compiles the rules engine's hot
modules with Cython when a C compiler and Python's headers are there, the same build as ``make
engine-build`` makes in a checkout, and installs the pure-Python engine alone where they are
not (or with ``ESCOBA_ENGINE_BUILD=python``). A bot author's search then runs on the compiled
engine too. The project's metadata is in ``pyproject.toml``; this file only adds that step.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ENGINE = Path(__file__).resolve().parent / "engine"


def _load(name: str) -> ModuleType:
    """One of the engine's build modules, by file path: the package being built cannot be
    imported, and these two import nothing of it."""
    spec = importlib.util.spec_from_file_location(f"_escoba_games_{name}", ENGINE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_build = _load("_build")
_compile = _load("_compile")


def pure_only() -> str | None:
    """Why this build installs the pure-Python engine alone, or None to compile it."""
    if os.environ.get("ESCOBA_ENGINE_BUILD", "").strip().lower() == "python":
        return "ESCOBA_ENGINE_BUILD=python"
    return _compile.missing_tools()


class BuildPyWithEngine(build_py):
    """Copy the package as usual, less this file, then compile the engine into the copy."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        # This directory is the package itself (package-dir games = "."), so this file would be
        # installed as games.setup.
        modules = super().find_package_modules(package, package_dir)
        return [module for module in modules if module[:2] != ("games", "setup")]

    def run(self) -> None:
        super().run()
        why = pure_only()
        if why is not None:
            print(f"escoba engine: pure Python ({why})", file=sys.stderr)
            return
        engine = Path(self.build_lib) / "games" / "engine"
        target = _build.compiled_dir(engine)
        try:
            _compile.compile_engine(
                engine,
                target,
                _build.COMPILED,
                (_build.STAMP, _build.source_digest()),
                _build.extension_suffix(),
            )
        except _compile.CompileError as error:
            # A broken toolchain leaves the author with the engine that works everywhere.
            shutil.rmtree(target, ignore_errors=True)
            print(f"escoba engine: pure Python, the compiler failed:\n{error}", file=sys.stderr)
        else:
            print(f"escoba engine: compiled into {target}", file=sys.stderr)


class EngineDistribution(Distribution):
    """A wheel that holds the compiled engine is tagged for this interpreter and platform."""

    def has_ext_modules(self) -> bool:
        return pure_only() is None


setup(cmdclass={"build_py": BuildPyWithEngine}, distclass=EngineDistribution)
