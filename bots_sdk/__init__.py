"""Escoba Arena bots SDK: write `choose(state) -> move`, serve it, check it, register it.

The rules engine (`bots_sdk.engine`) and the wire format (`bots_sdk.protocol`) are the arena's
own modules, shipped as they are, so cards, moves and legal moves mean exactly what the referee
means by them.
"""

from .bot import Bot, BotError, bot
from .check import CheckReport, CheckResult, run_check
from .engine import ALL_CARDS, Card, Move
from .protocol import PROTOCOL, ProtocolError
from .server import ServerHandle, make_server, serve, serve_in_thread
from .state import BotState

__all__ = [
    "ALL_CARDS",
    "PROTOCOL",
    "Bot",
    "BotError",
    "BotState",
    "Card",
    "CheckReport",
    "CheckResult",
    "Move",
    "ProtocolError",
    "ServerHandle",
    "bot",
    "make_server",
    "run_check",
    "serve",
    "serve_in_thread",
]
