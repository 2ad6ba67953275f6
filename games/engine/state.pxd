# C types for the compiled build of state.py (Cython's "augmenting .pxd"): the source stays
# plain Python, and this file only says which fields and locals are C values. A field or a
# local that is not named here stays a Python object.

cimport cython

from .moves cimport _MoveFields


# A search clones a game (and its round record) for every simulation: keep freed ones for reuse.
@cython.freelist(64)
cdef class _Round:
    cdef public int dealer
    cdef public list deck
    cdef public int deals
    cdef public list table
    cdef public object lucky
    cdef public list plays
    cdef public object leftover
    cdef public list captured
    cdef public list escobas
    cdef public object score
    cdef public object totals

    cpdef _Round copy(self)


@cython.final
@cython.freelist(64)
cdef class Game:
    cdef public object ruleset
    cdef public object seed
    cdef public int _players
    cdef public list _teams
    cdef public int _num_teams
    cdef public bint _optional
    cdef public list _totals
    cdef public list _rounds
    cdef public object _result
    cdef public object _forfeit_reason
    cdef public int _round_number
    cdef public int _dealer
    cdef public list _deck
    cdef public int _deck_position
    cdef public list _hands
    cdef public list _table
    cdef public long long _table_key
    cdef public unsigned long long _table_mask
    cdef public list _captured
    cdef public list _seat_captured
    cdef public list _escobas
    cdef public int _last_capturer
    cdef public _Round _record
    cdef public list _plays
    cdef public int _turn

    @cython.locals(
        seat=int, card=int, taken=int, position=int, mask=cython.ulonglong,
        one=cython.ulonglong, optional=bint, table=list, hand=list, by_card=tuple,
        combos=tuple, positions=tuple, moves=dict, trails=tuple, legal=list,
    )
    cpdef list legal_moves(self)

    @cython.locals(
        seat=int, card=int, mask=cython.ulonglong, fields=_MoveFields, by_card=tuple,
    )
    cpdef apply(self, move)

    @cython.locals(number=int, made=cython.longlong, limit=cython.longlong)
    cpdef int play_random(self, object rng, object plays=*, bint to_game_end=*) except? -1

    @cython.locals(
        seat=int, card=int, taken=int, position=int, count=int, chosen=int,
        mask=cython.ulonglong, one=cython.ulonglong, optional=bint, table=list, hand=list,
        by_card=tuple, combos=tuple, moves=dict, trails=tuple,
    )
    cdef _play_random_one(self, double fraction)

    @cython.locals(
        one=cython.ulonglong, optional=bint, players=int, made=cython.longlong, record=_Round,
        plays=list, dealer=int, turn=int, seat=int, hand=list, i=int, j=int, _step=int, team=int,
        table_list=list, size=int, position=int, table_key=cython.longlong,
        table_mask=cython.ulonglong, last_capturer=int, round_over=bint, fraction=double,
        base=int, count=int, found=int, chosen=int, card=int, escoba=bint, taken=int,
        mask=cython.ulonglong, kept=int, first=int, second=int, third=int,
    )
    cdef long _play_random_arrays(self, object draw, long long limit,
                                  bint to_game_end) except? -1

    @cython.locals(key=cython.longlong, by_key=dict, by_card=tuple)
    cdef inline tuple _captures(self)

    @cython.locals(card=int, team=int, mask=cython.ulonglong, escoba=bint, hand=list,
                   table=list)
    cdef _play(self, _MoveFields fields, int seat)

    @cython.locals(other=Game, record=_Round, rounds=list, hand=list)
    cpdef Game clone(self)

    @cython.locals(players=int, position=int, worth=int, sweeps=int, c=int, table=list)
    cpdef _start_round(self, int number, int dealer)

    @cython.locals(deck=list, position=int, players=int, hands=list, seat=int, step=int)
    cpdef _deal_hands(self)

    @cython.locals(record=_Round, taker=int, seat=int, count=int, escobas=list, totals=list,
                   points=list)
    cpdef _end_round(self)

    cpdef _finish(self, result)



@cython.locals(number=object, low=cython.longlong, product=cython.longlong, size=int,
               index=cython.Py_ssize_t, remaining=list, deck=list, sizes=tuple)
cpdef list round_deck(object seed, int round_number)

cpdef tuple decode_play(long long code)

cpdef _move_of(long long key)

@cython.locals(limit=int, depth=int, total=int, position=int, value=int, index=int)
cdef int _search_sums(int* table, int size, int need, int chosen, int* out) noexcept

cdef inline (int, int, int) _in_order(int first, int second, int third) noexcept

@cython.locals(first=int, second=int, third=int)
cpdef list _hand(list deck, int position)

@cython.locals(mask=cython.ulonglong, card=int)
cpdef _mask(list cards)

@cython.locals(c=int)
cpdef list _names(list cards)

@cython.locals(order=list, deck=list, names=tuple, deals=list, position=int, seat=int,
               step=int, first=int, second=int, third=int, deal=list)
cpdef list _deals_log(_Round record, int players)

@cython.locals(moves=dict, logged=list, code=cython.longlong, move=_MoveFields)
cpdef list _plays_log(list plays)

@cython.locals(score=list)
cpdef dict _round_log(_Round record, int players, object options)
