"""What a finished game and a set count for: standings, set scores, no-shows. Pure.

A set (a ``Match``: its games with the seats rotated, on fresh deals in rated play, see
``games.scheduling``) is the unit of the published rating. Each pair of bots in a set gets one
score from it, between 0 and 1:

- a bot that forfeited a game of the set scores 0 against one that did not (and 1 the other way);
- otherwise its share of the set's games in which it beat the other (a drawn game counts half):
  with two games 1, 1/2 or 0;
- a level share (the usual 1-1 split of a two-game set) leans a quarter, to 3/4 against 1/4,
  towards the bot whose side made more game points over the set; with equal points it stays 1/2.

The game points tell a split set by how much more each bot made of its cards, without outweighing
a game won; the luck of fresh deals is taken out of the score afterwards
(``games.ratings.baseline``). ``benchmarks/ranking_quality.py`` compares this with the share of
games alone and with letting the points decide the whole set (docs/ratings.md).

No-shows: a seat that made no valid move because the bot could not be reached or never answered
is a no-show (``no_show_seats``): the game is recorded, but rated for nobody. A bot that played
and then failed is not a no-show: it loses by forfeit, as the fault policy says.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Fault kinds that mean "never reached" or "never answered" (see games.faults.FaultKind): a seat
# whose every fault is one of these, and that made no valid move, did not show up.
NO_SHOW_FAULTS = frozenset({"connect", "timeout", "address"})


def game_participants(
    seating: Sequence[int], team_of: Callable[[int], int]
) -> list[tuple[int, int]]:
    """(bot id, team) of each bot seated, in bot id order (also the order rows are locked in).

    `team_of` is the league ruleset's `Ruleset.team_of`. In partnership games a bot holds both
    seats of its team and counts once.
    """
    return sorted({bot_id: team_of(seat) for seat, bot_id in enumerate(seating)}.items())


def standing_key(*, won: bool, forfeited: bool, total: int) -> tuple[int, int, int]:
    """How one player finished a game, for pairwise comparison.

    A forfeit ranks below everything, the winner above the other players, and the rest by the
    game points they made. Equal keys are a draw (e.g. a game without a winner).
    """
    return (0 if forfeited else 1, 1 if won else 0, total)


def pairwise_score(mine: tuple, theirs: tuple) -> float:
    """1, 1/2 or 0: compare two players' standing keys (higher is better)."""
    if mine > theirs:
        return 1.0
    if mine < theirs:
        return 0.0
    return 0.5


@dataclass(frozen=True)
class GameFacts:
    """One finished game as the ratings see it.

    ``participants`` are (player, team) once per player: a bot fielding both seats of a
    partnership is one participant. ``totals`` are game points by team.
    """

    participants: tuple[tuple[int, int], ...]
    winner: int | None
    totals: tuple[int, ...]
    forfeit_team: int | None

    def keys(self) -> dict[int, tuple[int, int, int]]:
        return {
            player: standing_key(
                won=self.winner == team,
                forfeited=self.forfeit_team == team,
                total=self.totals[team],
            )
            for player, team in self.participants
        }


def set_pair_scores(games: Sequence[GameFacts]) -> list[tuple[int, int, float]]:
    """Each pair's score from one duplicate set: (a, b, a's score) with a < b, sorted.

    See the module docstring for the rule; scores are whole twelfths. A pair counts only the
    games in which its two bots sat on different teams: partners do not play each other. In
    rated partnership play (four bots, partners rotating: ``games.scheduling.individual_seatings``)
    two bots are partners in one game of the set and opponents in the other two, so each pair is
    scored on those two, by its games alone (a forfeit costs the forfeiting seat's team the game;
    the set-wide forfeit rule, which cannot tell partners apart, applies only to pairs that were
    opponents in every game). A pair that never met is left out.
    """
    beaten: dict[tuple[int, int], float] = {}
    met: dict[tuple[int, int], int] = {}
    points: dict[tuple[int, int], int] = {}
    forfeits: dict[int, int] = {}
    players: set[int] = set()
    for game in games:
        keys = game.keys()
        teams = dict(game.participants)
        players.update(keys)
        for player, team in game.participants:
            forfeits[player] = forfeits.get(player, 0) + (game.forfeit_team == team)
        for a, b in itertools.permutations(keys, 2):
            if teams[a] == teams[b]:
                continue
            met[(a, b)] = met.get((a, b), 0) + 1
            points[(a, b)] = points.get((a, b), 0) + game.totals[teams[a]]
            beaten[(a, b)] = beaten.get((a, b), 0.0) + pairwise_score(keys[a], keys[b])
    scores = []
    for a, b in itertools.combinations(sorted(players), 2):
        games_met = met.get((a, b), 0)
        if not games_met:
            continue
        always_opposed = games_met == len(games)
        if always_opposed and (forfeits[a] > 0) != (forfeits[b] > 0):
            scores.append((a, b, 0.0 if forfeits[a] else 1.0))
            continue
        share = beaten[(a, b)] / games_met
        if share == 0.5 and points[(a, b)] != points[(b, a)]:
            share = 0.75 if points[(a, b)] > points[(b, a)] else 0.25
        scores.append((a, b, share))
    return scores


def no_show_seats(
    *, seats: int, plays: Iterable[tuple[int, str | None]], faults: Iterable[dict[str, Any]]
) -> set[int]:
    """The seats that did not show up in a game (see the module docstring).

    ``plays`` are (seat, fault kind or None) for every play made, in order; ``faults`` every
    fault with its ``seat`` and ``kind`` (including the one that ended a game by forfeit, which
    made no play). A seat never asked to move is not a no-show.
    """
    asked: set[int] = set()
    moved: set[int] = set()
    kinds: dict[int, set[str]] = {seat: set() for seat in range(seats)}
    for seat, fault in plays:
        asked.add(seat)
        if fault is None:
            moved.add(seat)
    for fault in faults:
        asked.add(fault["seat"])
        kinds[fault["seat"]].add(str(fault["kind"]))
    return {
        seat
        for seat in range(seats)
        if seat in asked and seat not in moved and kinds[seat] <= NO_SHOW_FAULTS
    }


def set_outcomes(games: Sequence[GameFacts]) -> dict[int, str]:
    """One duplicate set's outcome per player: "won", "drawn" or "lost" (the league table's).

    Within a set every player played the same deals, so the set goes to the player with most
    games won (a drawn game half), then most game points; players level at the top share it as
    a draw.
    """
    tallies: dict[int, list[float]] = {}
    for game in games:
        for player, team in game.participants:
            tally = tallies.setdefault(player, [0, 0])
            tally[0] += 1 if game.winner == team else 0.5 if game.winner is None else 0
            tally[1] += game.totals[team]
    if not tallies:
        return {}
    best = max(tuple(tally) for tally in tallies.values())
    leaders = [player for player, tally in tallies.items() if tuple(tally) == best]
    return {
        player: ("won" if len(leaders) == 1 else "drawn") if player in leaders else "lost"
        for player in tallies
    }


def crosstable_cells(games: Iterable[GameFacts]) -> dict[tuple[int, int], tuple[float, int]]:
    """(a, b) → (a's score against b, games they met in), over every game given.

    In 3-player games each pair counts as meeting once per game (by standing), and in
    partnership games the players of opposing teams meet; partners do not.
    """
    cells: dict[tuple[int, int], tuple[float, int]] = {}
    for game in games:
        keys = game.keys()
        teams = dict(game.participants)
        for a, b in itertools.permutations(keys, 2):
            if teams[a] == teams[b]:
                continue
            score, count = cells.get((a, b), (0.0, 0))
            cells[(a, b)] = (score + pairwise_score(keys[a], keys[b]), count + 1)
    return cells
