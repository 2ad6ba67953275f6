"""The example bots: what each one does in telling positions, and who beats whom.

The strength tests play in-process (engine + `protocol.move_request` + `BotState`, no HTTP), in
pairs of games on the same seed with the seats swapped, so luck of the deal evens out. Each plays
as many games as make its win rate's 95 % interval (Wilson's) clear the threshold it asserts:
over 200 games greedy wins 96 % against random and expert 80 % against greedy, so 40 and 100
games tell the same as 200 did (docs/benchmarks-journal.md has the 200-game figures).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from bots_sdk import BotState, Move
from bots_sdk.examples import expert, greedy, variants
from bots_sdk.examples import random as random_bot
from bots_sdk.local import duel, play_game
from games.engine import Card


def legal_moves(hand: list[str], table: list[str]) -> list[dict[str, Any]]:
    """Forced capture: a card that can make 15 must capture, otherwise it trails."""
    moves = []
    values = {text: Card.from_str(text).value for text in table}
    for card in hand:
        need = 15 - Card.from_str(card).value
        captures = [
            list(combo)
            for size in range(1, len(table) + 1)
            for combo in itertools.combinations(table, size)
            if sum(values[c] for c in combo) == need
        ]
        moves += [{"card": card, "capture": capture} for capture in captures]
        if not captures:
            moves.append({"card": card, "capture": []})
    return moves


def state(
    hand: list[str],
    table: list[str],
    *,
    history: list[tuple[str, list[str]]] = (),
    deck_remaining: int = 20,
    their_hand: int = 3,
) -> BotState:
    return BotState.from_request(
        {
            "protocol": "escoba/1",
            "game": {
                "id": "g",
                "match_id": "m",
                "ruleset": {"name": "classic", "version": 1, "options": {}},
                "timeout_ms": 1000,
            },
            "round": 1,
            "you": {"seat": 0, "team": 0, "hand": hand},
            "table": table,
            "dealer": 1,
            "deck_remaining": deck_remaining,
            "seats": [
                {
                    "seat": 0,
                    "team": 0,
                    "name": "us",
                    "hand_size": len(hand),
                    "captured": 0,
                    "escobas": 0,
                },
                {
                    "seat": 1,
                    "team": 1,
                    "name": "them",
                    "hand_size": their_hand,
                    "captured": 0,
                    "escobas": 0,
                },
            ],
            "scores": [0, 0],
            "history": [
                {"seat": 1, "card": card, "capture": capture, "escoba": False}
                for card, capture in history
            ],
            "legal_moves": legal_moves(hand, table),
            "latency_ms": None,
            "time_bank_ms": 1000,
        }
    )


def test_random_is_reproducible_and_seeded():
    position = state(["1c", "2c", "3c"], ["4e", "6e", "9e"])
    assert len({random_bot.choose(position) for _ in range(5)}) == 1
    picks = {random_bot.make_random(seed)(position) for seed in range(30)}
    assert len(picks) > 1
    assert picks <= set(position.legal_moves)


def test_greedy_sweeps_first():
    position = state(["5o", "10c"], ["2c", "3b", "5e"])
    assert greedy.choose(position) == Move.from_str("5o:2c+3b+5e")


def test_greedy_takes_most_cards_then_the_seven_of_oros():
    assert greedy.choose(state(["10c", "2b"], ["1c", "4e", "5e", "6b"])) == Move.from_str(
        "10c:1c+4e"
    )
    assert greedy.choose(state(["8c", "6b"], ["7o", "7c", "9e"])) == Move.from_str("8c:7o")


def test_greedy_trails_its_least_useful_card():
    assert greedy.choose(state(["7o", "1o", "9c"], [])) == Move.from_str("9c")


def test_expert_prefers_a_sweep():
    assert expert.choose(state(["5o", "10c"], ["2c", "3b", "5e"])) == Move.from_str("5o:2c+3b+5e")


def test_expert_does_not_leave_a_sweep_on_an_empty_table():
    # Greedy trails the 9 (worth nothing) and leaves 9: any 6 sweeps it. A lone 4 needs an 11.
    position = state(["4o", "9c"], [])
    assert greedy.choose(position) == Move.from_str("9c")
    assert expert.choose(position) == Move.from_str("4o")


def test_expert_guards_the_seven_of_oros():
    assert expert.choose(state(["7o", "1e"], ["3c", "4b"])) == Move.from_str("1e")


def test_expert_counts_cards():
    # On a 5, trailing the 1 leaves 6 (a 9 sweeps it), trailing the 3 leaves 8 (a 7 sweeps it).
    nines_gone = [("9o", []), ("9c", []), ("9e", []), ("9b", [])]
    sevens_gone = [("7o", []), ("7c", []), ("7e", []), ("7b", [])]
    assert expert.choose(state(["1c", "3c"], ["5e"], history=nines_gone)) == Move.from_str("1c")
    assert expert.choose(state(["1c", "3c"], ["5e"], history=sevens_gone)) == Move.from_str("3c")


def test_expert_takes_the_leftovers_with_the_last_capture():
    # Last play of the round: taking anything also takes the rest of the table.
    position = state(["10c"], ["5e", "2b", "3b"], deck_remaining=0, their_hand=0)
    assert expert.choose(position).capture


@pytest.mark.parametrize("name", ["cautious", "sweeper", "counter", "random_7", "random_42"])
def test_variants_play_whole_games(name):
    result = play_game([getattr(variants, name), greedy.choose], seed=3)
    assert result.reason in ("target", "max_rounds", "shared")


def test_four_players_in_teams():
    result = play_game([expert.choose, random_bot.choose, expert.choose, random_bot.choose], seed=4)
    assert result.winner in (0, 1)


def wilson_low(wins: int, games: int, z: float = 1.96) -> float:
    """The lower end of the 95 % (Wilson score) interval of a win rate of `wins` in `games`."""
    rate, spread = wins / games, z * z / games
    centre = rate + spread / 2
    margin = z * math.sqrt(rate * (1 - rate) / games + spread / (4 * games))
    return (centre - margin) / (1 + spread)


@pytest.mark.slow
def test_greedy_beats_random_over_40_games():
    result = duel(greedy.choose, random_bot.choose, games=40, seed=2024)
    assert result.games == 40
    assert result.win_rate > 0.75, result
    # Enough games to tell: not a lucky run of an even match.
    assert wilson_low(result.wins, result.games) > 0.75, result


@pytest.mark.slow
def test_expert_beats_greedy_over_100_games():
    result = duel(expert.choose, greedy.choose, games=100, seed=2024)
    assert result.games == 100
    assert result.win_rate > 0.65, result
    assert wilson_low(result.wins, result.games) > 0.65, result
