"""The search example: legal, reproducible answers within the time the request gives it.

Its strength against `expert` is measured, not tested (docs/benchmarks.md): a duel of 200
duplicate sets at 200 ms a move takes the better part of an hour.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bots_sdk import BotState
from bots_sdk.examples import expert, greedy, search
from bots_sdk.local import duel
from games.engine import ALL_CARDS, Card, Game, Move, Ruleset
from games.wire import move_request


def request(game: Game, *, time_bank_ms: int = 1000, timeout_ms: int = 1000) -> BotState:
    seat = game.current_seat
    body = move_request(
        game.view(seat),
        game_id="g",
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


def test_searches_running_at_once_keep_more_time_back_each(monkeypatch):
    """Searches of several games share one core: each other search in flight when one starts
    takes `RESERVE_PER_OTHER_SEARCH_MS` off its budget, and a search that ended no longer counts."""
    game = position(Ruleset.from_preset("classic"), 8, 0)
    state = request(game, time_bank_ms=1000, timeout_ms=1000)
    assert len(state.legal_moves) > 1  # a choice to search
    budgets: list[float] = []
    started = threading.Semaphore(0)
    release = threading.Event()

    def fake_search(state, deadline):
        budgets.append(deadline - state.received_at)
        started.release()
        release.wait(10)
        return state.legal_moves[0], []

    monkeypatch.setattr(search, "search", fake_search)
    threads = []
    for _ in range(3):  # one after the other, so each sees the ones before it running
        threads.append(threading.Thread(target=search.choose, args=(state,)))
        threads[-1].start()
        assert started.acquire(timeout=10)
    release.set()
    for thread in threads:
        thread.join(10)
    search.choose(state)  # alone again

    full = search.budget_seconds(state)
    step = search.RESERVE_PER_OTHER_SEARCH_MS / 1000
    expected = [full, full - step, full - 2 * step, full]
    assert budgets == pytest.approx(expected, abs=1e-6)


@pytest.fixture
def searches(monkeypatch) -> list[tuple[BotState, float]]:
    """Every search `choose` starts, as (state, deadline), answered at once with the first
    legal move instead of searching."""
    started: list[tuple[BotState, float]] = []

    def recorded(state, deadline):
        started.append((state, deadline))
        return state.legal_moves[0], []

    monkeypatch.setattr(search, "search", recorded)
    return started


def test_the_time_is_counted_from_the_requests_arrival(searches):
    """Time spent before `choose` ran (a busy core, parsing) comes off the search: the deadline
    is the arrival plus the budget; a request that waited past all but the floor of its budget
    gets the expert's move without a search."""
    game = position(Ruleset.from_preset("classic"), 8, 0)
    waited = replace(request(game), received_at=time.perf_counter() - 0.2)
    search.choose(waited)
    deadlines = [deadline for _, deadline in searches]
    assert deadlines == [waited.received_at + search.budget_seconds(waited)]
    assert deadlines[0] - time.perf_counter() < search.budget_seconds(waited) - 0.19

    too_late = replace(request(game), received_at=time.perf_counter() - 0.6)
    assert search.choose(too_late) == expert.choose(too_late)
    assert len(searches) == 1  # no second search


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


def test_with_too_little_time_to_search_it_plays_the_expert_move_at_once(searches):
    """A bank of 20 ms cannot pay for the samples and a deal: the answer is expert's, and no
    search starts; a bank of 200 ms searches."""
    game = position(Ruleset.from_preset("classic"), 8, 0)
    assert len(game.legal_moves()) > 1  # a choice to search
    short = request(game, time_bank_ms=20, timeout_ms=20)
    assert search.choose(short) == expert.choose(short)
    search.choose(request(game, time_bank_ms=200, timeout_ms=200))
    assert [state.time_bank_ms for state, _ in searches] == [200]


def test_before_the_last_deal_a_rollout_values_the_captures_up_to_the_next_deal():
    """A rollout that stops after some plays returns what the team captured less what the others
    did, by the expert's weights: zero plays, zero value; a capture by our team counts for it."""
    ruleset = Ruleset.from_preset("classic")
    for seed in range(200):
        game = position(ruleset, seed, 0)
        captures = [move for move in game.legal_moves() if move.capture]
        if captures and len(captures[0].capture) < len(game.table):
            break
    else:
        raise AssertionError("no seed in 200 offers a capture that is not a sweep at once")
    seat = game.current_seat
    teams = [game.ruleset.team_of(s) for s in range(game.ruleset.players)]
    assert search.rollout(game.clone(), teams[seat], random.Random(1), 0, teams) == 0.0
    # EXPLORE aside, the greedy policy takes a capture on offer: one play's value is its points.
    values = {
        search.rollout(game.clone(), teams[seat], random.Random(s), 1, teams) for s in range(20)
    }
    assert max(values) > 0


def plain_minimax(game: Game, team: int, teams: list[int], before: list[int], number: int) -> float:
    """The rest of the round's value by trying every line of play, no cuts."""
    if game.is_over or game.round != number:
        return search.round_out_value(game, before, team)
    values = []
    for move in game.legal_moves():
        child = game.clone()
        child.apply(move)
        values.append(plain_minimax(child, team, teams, before, number))
    return max(values) if teams[game.current_seat] == team else min(values)


def last_deal(ruleset: Ruleset, seed: int, cards_left: int) -> Game:
    """A random game's first round played at random until ``cards_left`` cards remain in the
    hands of the last deal."""
    game = position(ruleset, seed, 0)
    chooser = random.Random(seed)
    while True:
        view = game.view(game.current_seat)
        if view.deck_remaining == 0 and sum(s.hand_size for s in view.seats) <= cards_left:
            return game
        game.apply(chooser.choice(game.legal_moves()))


def test_the_last_deal_solve_finds_the_value_of_the_best_line_of_play():
    """Alpha-beta cuts lines that cannot change the result, never the result: the solve's value
    is what trying every line gives, from either side's point of view."""
    for players, teams_on in ((2, False), (4, True)):
        ruleset = Ruleset.from_preset("classic", {"players": players, "teams": teams_on})
        teams = [ruleset.team_of(seat) for seat in range(players)]
        for seed in range(12):
            game = last_deal(ruleset, seed, 6)
            before = game.totals
            for team in (0, 1):
                expected = plain_minimax(game.clone(), team, teams, before, game.round)
                assert search.solve(game.clone(), team, teams, before, game.round) == expected


def test_in_a_two_player_last_deal_one_exact_solve_decides():
    """The other hand is every unseen card: one sample is the whole truth, solved once, and the
    move chosen is one whose exact value is the best."""
    ruleset = Ruleset.from_preset("classic")
    teams = [0, 1]
    checked = 0
    for seed in range(20):
        game = last_deal(ruleset, seed, 6)
        state = request(game)
        if len(state.legal_moves) < 2:
            continue
        move, stats = search.search(state, float("inf"), max_deals=50)
        assert {deals for _, deals, _ in stats} == {1}
        exact = {}
        for candidate in state.legal_moves:
            child = game.clone()
            child.apply(candidate)
            exact[candidate] = plain_minimax(child, state.team, teams, game.totals, game.round)
        assert exact[move] == max(exact.values())
        checked += 1
    assert checked >= 10


def test_a_round_is_worth_more_to_the_side_that_has_taken_more():
    """Two sides: nothing taken is worth nothing; more cards, oros or sevens are worth more, a
    category past half is won for sure, and what one side gains the other loses."""
    value = search.RoundValue({"sevens": "setenta", "seven_of_oros": 1}, 0, 2)
    other = search.RoundValue({"sevens": "setenta", "seven_of_oros": 1}, 1, 2)

    def pile(*names: str) -> int:
        return sum(search._BITS[Card.from_str(name).index] for name in names)

    assert value([0, 0]) == 0.0
    some = pile("1c", "2c", "3c")
    assert value([some, 0]) > 0.0 and value([some, 0]) == -other([some, 0])
    assert value([some, 0]) < value([pile("1c", "2c", "3c", "4c"), 0])
    assert value([pile("1c", "2c"), 0]) < value([pile("1o", "2c"), 0])
    assert value([pile("1c", "2c"), 0]) < value([pile("7c", "2c"), 0])
    # The seven of oros is a point on its own, on top of the oro and the seven it also is.
    assert value([pile("7o"), 0]) > value([pile("7c"), 0]) + 0.9
    # 21 cards of 40 win the cards point whatever happens to the rest; so do 6 oros, 3 sevens.
    everything = pile(*(str(card) for card in ALL_CARDS))
    assert value([everything, 0]) == 1 + 1 + 1 + 1
    assert search._CARD_MARGIN[21][0] == 1.0 and search._CARD_MARGIN[0][21] == -1.0
    assert search._OROS_MARGIN[6][0] == 1.0 and search._SEVENS_MARGIN[3][0] == 1.0


def test_with_a_few_deals_a_move_it_beats_greedy():
    """Strength, not speed: 20 sampled deals a move, no clock, 6 duplicate sets against greedy
    (a random player wins almost none of these)."""

    def fixed_deals(state: BotState) -> Move:
        return search.search(state, float("inf"), max_deals=20)[0]

    result = duel(fixed_deals, greedy.choose, games=12, seed=500)
    assert result.wins >= 9, result


def test_the_burst_benchmark_serves_the_demo_bot_and_reports_its_answer_times():
    """`benchmarks/search_burst.py` (figures in docs/benchmarks.md) still runs: one small burst
    against this checkout's demo search bot, every answer in time."""
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "benchmarks.search_burst", "--clients", "2"]
    command += ["--rounds", "1", "--batches", "1", "--bank-ms", "1000"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "over 800 ms: 0 of 2" in done.stdout.splitlines()[-1]
