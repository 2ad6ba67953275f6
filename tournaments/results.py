"""Who took part in a stored game, on which team, and how each one stood at its end.

Pure reads of a finished ``Game`` row (its seating and result) and its league's ruleset, which
alone says a seat's team (``Ruleset.team_of``); shared by the rating service and the selectors,
neither of which needs the other for them.
"""

from __future__ import annotations

from collections.abc import Callable

from games.engine import Ruleset
from tournaments.elo import standing_key
from tournaments.models import Game


def game_participants(game: Game, team_of: Callable[[int], int]) -> list[tuple[int, int]]:
    """(bot id, team) of each bot in the game, in bot id order: the fixed locking order.

    `team_of` is the league ruleset's `Ruleset.team_of`. In partnership games a bot holds both
    seats of its team and counts once.
    """
    teams = {bot_id: team_of(seat) for seat, bot_id in enumerate(game.seating)}
    return sorted(teams.items())


def game_standings(game: Game, participants: list[tuple[int, int]]) -> list[tuple]:
    """Each participant's standing key from the stored result (see ``elo.standing_key``)."""
    forfeit_team = None if game.forfeit is None else game_ruleset(game).team_of(game.forfeit)
    return [
        standing_key(
            won=game.winner == team, forfeited=forfeit_team == team, total=game.totals[team]
        )
        for _, team in participants
    ]


def game_ruleset(game: Game) -> Ruleset:
    """The ruleset the game was played under: its league's."""
    return Ruleset.from_dict(game.league.ruleset)
