# C types for the compiled build of moves.py (Cython's "augmenting .pxd"): the source stays
# plain Python, and this file only says which fields and locals are C values.

cdef class _MoveFields:
    cdef public object card
    cdef public tuple capture
    cdef public unsigned long long mask
    cdef public int total
    cdef public int card_index
    cdef public unsigned long long bit
    cdef public tuple taken
    cdef public long long taken_key
    cdef public unsigned long long won
    cdef public int size
    cdef public tuple wire
    cdef public long long code
    cdef public str _text
