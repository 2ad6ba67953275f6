from .bots import Bot, BotCheck
from .leagues import Game, GameLog, League, LeagueEntry, Match, Seat
from .ratings import Rating, RatingChange

__all__ = [
    "Bot",
    "BotCheck",
    "Game",
    "GameLog",
    "League",
    "LeagueEntry",
    "Match",
    "Rating",
    "RatingChange",
    "Seat",
]
