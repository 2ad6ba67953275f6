"""The search example: legal, reproducible answers within the time the request gives it.

Its strength against `expert` is measured, not tested (docs/benchmarks.md): a duel of 200
duplicate sets at 200 ms a move takes the better part of an hour.
"""

from __future__ import annotations

import random

from bots_sdk import BotState
from bots_sdk.examples import expert, search
from bots_sdk.local import duel
from games.engine import Game, Move, Ruleset
from games.wire import move_request


def request(game: Game, *, time_bank_ms: int = 1000, timeout_ms: int = 1000) -> BotState:
    seat = game.current_seat
    body = move_request(
        game.view(seat),
        game_id="g",
        match_id="m",
        timeout_ms=timeout_ms,
        seat_names=[f"seat{s}" for s in range(game.ruleset.players)],
        latency_ms=None,
        time_bank_ms=time_bank_ms,
    )
    return BotState.from_request(body)


def position(ruleset: Ruleset, seed: int, plays: int) -> Game:
    game = Game.new(ruleset, seed)
    chooser = random.Random(seed)
    for _ in range(plays):
        game.apply(chooser.choice(game.legal_moves()))
    return game


def test_it_answers_a_legal_move_from_its_share_of_the_time_bank():
    game = position(Ruleset.from_preset("classic"), 3, 4)
    state = request(game, time_bank_ms=200, timeout_ms=200)
    assert search.budget_seconds(state) == (200 * search.BUDGET_SHARE - search.RESERVE_MS) / 1000
    assert search.choose(state) in state.legal_moves
    # The deadline is checked after every deal: past it, exactly one deal is played.
    move, stats = search.search(state, deadline=0.0)
    assert move in state.legal_moves and {deals for _, deals, _ in stats} == {1}


def test_the_budget_follows_the_smaller_of_the_time_fields_and_has_a_floor():
    game = position(Ruleset.from_preset("classic"), 5, 2)
    assert search.budget_seconds(request(game, time_bank_ms=400, timeout_ms=1000)) == 0.225
    assert search.budget_seconds(request(game, time_bank_ms=10, timeout_ms=10)) == 0.005


def test_a_fixed_number_of_deals_gives_the_same_answer_and_statistics():
    game = position(Ruleset.from_preset("classic", {"players": 4, "teams": True}), 8, 9)
    state = request(game)
    first = search.search(state, float("inf"), max_deals=12)
    again = search.search(state, float("inf"), max_deals=12)
    assert first == again
    move, stats = first
    assert [entry[0] for entry in stats] == list(state.legal_moves)
    assert all(deals == 12 for _, deals, _ in stats)
    assert move == max(stats, key=lambda entry: entry[2])[0]


def test_in_the_last_deal_it_takes_the_sweep_on_offer():
    """No card left to deal, so the samples hold the other hand exactly: a sweep on offer (an
    escoba and the whole table) beats whatever else the hand could do."""
    ruleset = Ruleset.from_preset("classic")
    for seed in range(300):
        game = position(ruleset, seed, 0)
        chooser = random.Random(seed)
        while game.round == 1 and not last_turn(game):
            game.apply(chooser.choice(game.legal_moves()))
        if game.round != 1:
            continue
        moves = game.legal_moves()
        sweeps = [move for move in moves if len(move.capture) == len(game.table)]
        if sweeps and len(moves) > 1:
            move, _ = search.search(request(game), float("inf"), max_deals=4)
            assert move == sweeps[0]
            return
    raise AssertionError("no seed in 300 offers a sweep among other moves in the last deal")


def last_turn(game: Game) -> bool:
    """The last deal, and a sweep among other legal moves."""
    if game.view(game.current_seat).deck_remaining != 0:
        return False
    moves = game.legal_moves()
    return len(moves) > 1 and any(len(move.capture) == len(game.table) for move in moves)


def test_it_plays_whole_games_against_expert():
    result = duel(search.choose, expert.choose, games=2, timeout_ms=60)
    assert result.games == 2 and result.wins + result.losses + result.draws == 2


def test_moves_come_back_as_engine_moves():
    game = position(Ruleset.from_preset("classic"), 1, 1)
    state = request(game)
    assert isinstance(search.choose(state), Move)
