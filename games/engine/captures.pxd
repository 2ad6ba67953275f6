# C types for the compiled build of captures.py (Cython's "augmenting .pxd"; see state.pxd).

cimport cython

@cython.locals(position=int, reached=int)
cpdef _extend(tuple values, int start, int total, list chosen, list found)

@cython.locals(entry=tuple, c=int, value=int)
cpdef tuple captures_by_card(long long key, list table)
