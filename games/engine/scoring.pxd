# C types for the compiled build of scoring.py (Cython's "augmenting .pxd"; see state.pxd).

cimport cython

@cython.locals(sides=int, side=int, card_winner=int, oros_winner=int, sevens_winner=int,
               big=bint, every_oro=bint, every_seven=bint, over_half=bint,
               card_points=list, oros_points=list, sevens_points=list)
cpdef tuple _category_points(object options, list captured)

@cython.locals(best=int, top=int, tied=bint, side=int, count=int)
cpdef int _most(list captured, object cards, int half)

@cython.locals(best=int, tied=bint, index=int)
cpdef int _strict_index(list values)
