"""The Escoba rules engine: cards, moves, rulesets, game state, the escoba-log/1 log.

Pure standard-library Python with relative imports only: the service and the bots SDK both
install it as part of the ``games`` distribution. See docs/architecture.md for the API contract
and docs/rules.md for the rules.
"""

from .cards import ALL_CARDS, Card, french_label
from .errors import (
    EscobaError,
    IllegalMoveError,
    InvalidCardError,
    InvalidLogError,
    InvalidMoveError,
    RulesetError,
)
from .logs import replay_log, validate_log
from .moves import Move
from .rulesets import PRESETS, Ruleset
from .state import Game
from .views import GameView, LuckyDeal, Play, Result, SeatPublic

__all__ = [
    "ALL_CARDS",
    "PRESETS",
    "Card",
    "EscobaError",
    "Game",
    "GameView",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidLogError",
    "InvalidMoveError",
    "LuckyDeal",
    "Move",
    "Play",
    "Result",
    "Ruleset",
    "RulesetError",
    "SeatPublic",
    "french_label",
    "replay_log",
    "validate_log",
]
