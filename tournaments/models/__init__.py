from .bots import Bot, BotCheck
from .leagues import Game, League, LeagueEntry, Match, Seat
from .notifications import Notification, NotificationSettings
from .ratings import Rating, RatingChange

__all__ = [
    "Bot",
    "BotCheck",
    "Game",
    "League",
    "LeagueEntry",
    "Match",
    "Notification",
    "NotificationSettings",
    "Rating",
    "RatingChange",
    "Seat",
]
