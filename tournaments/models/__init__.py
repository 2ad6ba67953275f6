from .bots import Bot, BotCheck, BotVersion
from .leagues import Game, League, LeagueEntry, Match, Seat
from .ratings import RatedSet, Rating, RatingFit, RatingPoint, SetScore

__all__ = [
    "Bot",
    "BotCheck",
    "BotVersion",
    "Game",
    "League",
    "LeagueEntry",
    "Match",
    "RatedSet",
    "Rating",
    "RatingFit",
    "RatingPoint",
    "Seat",
    "SetScore",
]
