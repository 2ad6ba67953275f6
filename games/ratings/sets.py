"""What a finished game and a set count for: standings, set scores, no-shows. Pure.

A set (a ``Match``: its games with the seats rotated, see ``games.scheduling``) is the unit of
the published rating. Each pair of bots in a set gets one score from it, between 0 and 1, in
whole twelfths, by one of two rules, for the two ways a set is dealt:

- **A rated set, dealt afresh** (``fresh_set_pair_scores``): by game points. The pair's score
  is 1/2 plus its game-point margin over the games the two met, scaled so that a margin of
  ``SET_MARGIN`` points a game (20 in a two-game set) or more takes the whole set, in whole
  twelfths (rounded half away from zero). On fresh deals the luck of the cards weighs in every
  result, and the baseline correction (``games.ratings.baseline``) takes it out of a score
  linear in the game points far better than out of games won, which the points decide only at
  a threshold: ``benchmarks/luck.py`` measures 8 games per pair to separate random < greedy <
  expert by points, the same as duplicate sets scored by games won, against 12 for fresh sets
  scored by games won (docs/ratings.md).
- **A duplicate set** (``set_pair_scores``: the same deal for every seat, as an unrated set of
  one owner's bots is dealt; also every set of a version test, whose SPRT counts a two-game
  set's five outcomes, and the SDK's local league): the share of the set's games in which it
  beat the other (a drawn game counts half), and a level share (the usual 1-1 split of a
  two-game set) leans a quarter, to 3/4 against 1/4, towards the bot whose side made more game
  points over the set. The deal is the same for both, so games won say most; the points tell a
  split set by how much more each bot made of the same cards.

Under both, a bot that forfeited a game of the set scores 0 against one that did not (and 1 the
other way), when the two were opponents in every game of the set.

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
# A rated set's score by game points (``fresh_set_pair_scores``): a margin of this many points
# per game the pair met takes the whole set; a game forfeited counts as lost by at least twice
# as many (a whole two-game set's worth).
SET_MARGIN = 10
FORFEIT_MARGIN = 2 * SET_MARGIN


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

    def standing(self, team: int) -> tuple[int, int, int]:
        """How ``team`` finished this game (``standing_key``)."""
        return standing_key(
            won=self.winner == team, forfeited=self.forfeit_team == team, total=self.totals[team]
        )

    def keys(self) -> dict[int, tuple[int, int, int]]:
        return {player: self.standing(team) for player, team in self.participants}


# The games of a set in which one pair (a, b) met as opponents, each with a's team and b's.
Met = list[tuple[GameFacts, int, int]]


def _scored_pairs(
    games: Sequence[GameFacts], score: Callable[[Met], float]
) -> list[tuple[int, int, float]]:
    """Each pair's score from one set: (a, b, a's score) with a < b, sorted; ``score`` (a rule)
    gives it from the games the two met in as opponents (partners do not play each other; a
    pair that never met is left out). Under every rule, a bot that forfeited a game of a set in
    which the pair were always opponents scores 0 against one that did not (and 1 the other
    way): the set-wide forfeit rule cannot tell partners apart."""
    met: dict[tuple[int, int], Met] = {}
    forfeits: dict[int, int] = {}
    for game in games:
        teams = dict(game.participants)
        for player, team in game.participants:
            forfeits[player] = forfeits.get(player, 0) + (game.forfeit_team == team)
        for a, b in itertools.combinations(sorted(teams), 2):
            if teams[a] != teams[b]:
                met.setdefault((a, b), []).append((game, teams[a], teams[b]))
    scores = []
    for (a, b), together in sorted(met.items()):
        if len(together) == len(games) and (forfeits[a] > 0) != (forfeits[b] > 0):
            scores.append((a, b, 0.0 if forfeits[a] else 1.0))
        else:
            scores.append((a, b, score(together)))
    return scores


def set_pair_scores(games: Sequence[GameFacts]) -> list[tuple[int, int, float]]:
    """Each pair's score from one duplicate set: (a, b, a's score) with a < b, sorted.

    See the module docstring for the rule; scores are whole twelfths (a rated set, dealt
    afresh, is scored by ``fresh_set_pair_scores``). In rated partnership play (four bots,
    partners rotating: ``games.scheduling.individual_seatings``) two bots are partners in one
    game of the set and opponents in the other two, so each pair is scored on those two, by its
    games alone (a forfeit costs the forfeiting seat's team the game). See ``_scored_pairs`` for
    what every rule shares.
    """
    return _scored_pairs(games, _by_games_won)


def _by_games_won(together: Met) -> float:
    """The share of the games in which a beat b, a level share leaning a quarter towards the
    side with more game points over them."""
    beaten = 0.0
    margin = 0
    for game, team_a, team_b in together:
        beaten += pairwise_score(game.standing(team_a), game.standing(team_b))
        margin += game.totals[team_a] - game.totals[team_b]
    share = beaten / len(together)
    if share == 0.5 and margin:
        share = 0.75 if margin > 0 else 0.25
    return share


def fresh_set_pair_scores(games: Sequence[GameFacts]) -> list[tuple[int, int, float]]:
    """Each pair's score from one rated set dealt afresh: (a, b, a's score) with a < b, sorted.

    By game points (see the module docstring): 1/2 plus a's side's points less b's over the
    games the two met as opponents (``margin_twelfths``), so a's and b's scores always sum to
    1. A game that a's side forfeited counts as lost by ``FORFEIT_MARGIN`` points, or by its
    points if more (and won so by the other side). In rated partnership play a pair is scored
    on the two games it met in. See ``_scored_pairs`` for what every rule shares.
    """
    return _scored_pairs(games, _by_points)


def _by_points(together: Met) -> float:
    """1/2 plus a's game-point margin over b in these games, in whole twelfths."""
    margin = 0
    for game, team_a, team_b in together:
        points = game.totals[team_a] - game.totals[team_b]
        if game.forfeit_team == team_a:
            points = min(points, -FORFEIT_MARGIN)
        elif game.forfeit_team == team_b:
            points = max(points, FORFEIT_MARGIN)
        margin += points
    return (6 + margin_twelfths(margin, len(together))) / 12


def pair_scores(games: Sequence[GameFacts], *, dealt_afresh: bool) -> list[tuple[int, int, float]]:
    """Each pair's score from one set by the rule for how it was dealt: by game points for a set
    dealt afresh (``fresh_set_pair_scores``), by games won for a duplicate set
    (``set_pair_scores``)."""
    return (fresh_set_pair_scores if dealt_afresh else set_pair_scores)(games)


def margin_twelfths(margin: int, games: int) -> int:
    """How many twelfths of a set, from -6 to 6, a game-point margin over ``games`` games
    moves a pair's score from 1/2: ``6 margin / (SET_MARGIN games)``, rounded half away from
    zero in integer arithmetic, so a margin and its negative move it alike."""
    scale = SET_MARGIN * games
    twelfths = (12 * abs(margin) + scale) // (2 * scale)
    return min(6, twelfths) if margin >= 0 else -min(6, twelfths)


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
