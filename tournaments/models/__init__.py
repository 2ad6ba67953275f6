from .bots import Bot, BotCheck, BotVersion
from .ladder import Challenge, VersionTest
from .leagues import Game, GameLog, HeadToHead, League, LeagueEntry, Match, Seat
from .notifications import Notification, NotificationSettings
from .play import PersonGame
from .ratings import (
    BaselineCoefficient,
    DealBaseline,
    PairTotal,
    RatedSet,
    Rating,
    RatingFit,
    RatingPoint,
    SetScore,
    VersionTotal,
)
from .tallies import LeaguePair, LeagueStanding, LeagueTally

__all__ = [
    "BaselineCoefficient",
    "Bot",
    "BotCheck",
    "BotVersion",
    "Challenge",
    "DealBaseline",
    "Game",
    "GameLog",
    "HeadToHead",
    "League",
    "LeagueEntry",
    "LeaguePair",
    "LeagueStanding",
    "LeagueTally",
    "Match",
    "Notification",
    "NotificationSettings",
    "PairTotal",
    "PersonGame",
    "RatedSet",
    "Rating",
    "RatingFit",
    "RatingPoint",
    "Seat",
    "SetScore",
    "VersionTest",
    "VersionTotal",
]
