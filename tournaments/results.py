"""Who took part in a stored game, on which team, and how each one stood at its end.

Pure reads of a finished ``Game`` row (its seating, result and league's table size), shared by
the rating service and the selectors; neither needs the other for them.
"""

from __future__ import annotations

from tournaments.elo import standing_key
from tournaments.models import Game


def game_participants(game: Game, teams: list[int]) -> list[tuple[int, int]]:
    """(bot id, team) of each bot in the game, in bot id order: the fixed locking order.
    ``teams[seat]`` is the team of each seat.

    In partnership games a bot holds both seats of its team and counts once.
    """
    team_of_bot = {bot_id: teams[seat] for seat, bot_id in enumerate(game.seating)}
    return sorted(team_of_bot.items())


def game_standings(game: Game, participants: list[tuple[int, int]]) -> list[tuple]:
    """Each participant's standing key from the stored result (see ``elo.standing_key``)."""
    forfeit_team = None if game.forfeit is None else team_of_seat(game)[game.forfeit]
    return [
        standing_key(
            won=game.winner == team, forfeited=forfeit_team == team, total=game.totals[team]
        )
        for _, team in participants
    ]


def team_of_seat(game: Game) -> list[int]:
    """Seat → team, as the league's table size decides (partners sit opposite)."""
    seats = len(game.seating)
    return [seat % 2 for seat in range(seats)] if game.league.players == 4 else list(range(seats))
