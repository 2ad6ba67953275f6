"""Escoba Arena bots SDK: write `choose(state) -> move`, serve it, check it, register it.

The rules engine (`games.engine`) and the wire format (`games.wire`) come from the arena's own
`games` package, a dependency like any other, so cards, moves and legal moves mean exactly what
the referee means by them (they are the very same classes).
"""

from games.engine import ALL_CARDS, Card, Move
from games.protocol_check import CheckReport, CheckResult
from games.wire import PROTOCOL, ProtocolError

from .bot import Bot, BotError, Reply, bot
from .http_transport import run_check
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
    "Reply",
    "ServerHandle",
    "bot",
    "make_server",
    "run_check",
    "serve",
    "serve_in_thread",
]
