from .bots import Bot, BotCheck, BotVersion
from .leagues import Game, GameLog, League, LeagueEntry, Match, Seat
from .notifications import Notification, NotificationSettings
from .ratings import (
    PairTotal,
    RatedSet,
    Rating,
    RatingFit,
    RatingPoint,
    SetScore,
    VersionTotal,
)

__all__ = [
    "Bot",
    "BotCheck",
    "BotVersion",
    "Game",
    "GameLog",
    "League",
    "LeagueEntry",
    "Match",
    "Notification",
    "NotificationSettings",
    "PairTotal",
    "RatedSet",
    "Rating",
    "RatingFit",
    "RatingPoint",
    "Seat",
    "SetScore",
    "VersionTotal",
]
