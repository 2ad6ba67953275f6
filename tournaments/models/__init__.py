from .bots import Bot, BotCheck
from .ladder import Challenge, VersionTest
from .leagues import Game, League, LeagueEntry, Match, Seat
from .ratings import Rating, RatingChange

__all__ = [
    "Bot",
    "BotCheck",
    "Challenge",
    "Game",
    "League",
    "LeagueEntry",
    "Match",
    "Rating",
    "RatingChange",
    "Seat",
    "VersionTest",
]
