from .bots import Bot, BotCheck
from .ladder import Challenge, VersionTest
from .leagues import Game, GameLog, League, LeagueEntry, Match, Seat
from .notifications import Notification, NotificationSettings
from .ratings import Rating, RatingChange

__all__ = [
    "Bot",
    "BotCheck",
    "Challenge",
    "Game",
    "GameLog",
    "League",
    "LeagueEntry",
    "Match",
    "Notification",
    "NotificationSettings",
    "Rating",
    "RatingChange",
    "Seat",
    "VersionTest",
]
