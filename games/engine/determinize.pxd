# C types for the compiled build of determinize.py (Cython's "augmenting .pxd"; see state.pxd).
# The sampled game must be typed: its per-seat fields are C arrays, which an untyped name would
# only reach through a copy.

cimport cython

from .state cimport Game


cdef class Determinizer:
    cdef public int seat
    cdef public tuple unseen
    cdef public tuple hidden
    cdef public Game _template
    cdef public int _deck_position

    @cython.locals(game=Game, cards=list, start=int, seat=int, size=int, card=int,
                   hand=cython.ulonglong, one=cython.ulonglong, hands=cython.p_ulonglong,
                   rest=list, left=set, deck=list)
    cpdef Game sample(self, rng)
