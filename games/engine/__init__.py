"""The Escoba rules engine: cards, moves, rulesets, game state, the escoba-log/1 log.

Pure standard-library Python with relative imports only: the service and the bots SDK both
install it as part of the ``games`` distribution. See docs/architecture.md for the API contract
and docs/rules.md for the rules.
"""

from ._build import select as _select_build

# First of all: which build the modules below come from (see _build.py). BUILD is "compiled" or
# "python"; BUILD_REASON says why (where the build is, or why it is not used).
BUILD, BUILD_REASON = _select_build(__name__, __path__)

from .cards import ALL_CARDS, Card, french_label  # noqa: E402
from .determinize import Determinizer, determinize  # noqa: E402
from .errors import (  # noqa: E402
    EscobaError,
    IllegalMoveError,
    InvalidCardError,
    InvalidLogError,
    InvalidMoveError,
    RulesetError,
)
from .logs import replay_log, validate_log  # noqa: E402
from .moves import Move  # noqa: E402
from .rulesets import DEFAULT_PRESET, PRESETS, Ruleset  # noqa: E402
from .state import Game  # noqa: E402
from .views import GameView, LuckyDeal, Play, Result, SeatPublic  # noqa: E402

__all__ = [
    "ALL_CARDS",
    "BUILD",
    "DEFAULT_PRESET",
    "PRESETS",
    "Card",
    "Determinizer",
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
    "determinize",
    "french_label",
    "replay_log",
    "validate_log",
]
