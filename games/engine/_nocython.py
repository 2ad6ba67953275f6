"""What the engine asks of the ``cython`` module when Cython is not installed: nothing.

The compiled modules declare a few things for Cython in their own source (``@cython.cclass``,
``@cython.no_gc``), and ``Game.play_random`` takes a path of its own on C arrays when
``cython.compiled``: Cython reads them when it compiles, and the pure-Python build, which may run
where Cython is not installed, imports this module under that name and gets decorators that
return the class unchanged and ``compiled = False``.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def cclass(cls: T) -> T:
    return cls


def no_gc(cls: T) -> T:
    return cls


# Where this module stands in for Cython, nothing is compiled.
compiled = False
