"""The `escoba/1` wire format: the bodies the arena sends to bots and the replies it accepts.

Pure (the engine, the standard library and `fastjsonschema`), so the arena and the bots SDK
import the very same module:

- `games.wire.schemas`: the JSON Schemas (`docs/schemas/*.json` are these), compiled once, and
  `ProtocolError` with its messages in our words;
- `games.wire.requests`: what we send (`move_request`, `start_notice`, `end_notice`);
- `games.wire.replies`: what we accept (`parse_move_reply`, `parse_info_reply`) and what a bot
  accepts (`parse_move_request`).
"""

from .replies import (
    DEBUG_MAX_BYTES,
    BotInfo,
    Debug,
    MoveRequest,
    SeatInfo,
    move_reply_debug,
    parse_info_reply,
    parse_move_reply,
    parse_move_request,
)
from .requests import (
    WireHistory,
    anonymous_seat_names,
    end_notice,
    game_block,
    info_reply,
    move_request,
    start_notice,
    wire_lucky_deal,
    wire_play,
)
from .schemas import (
    END_NOTICE_SCHEMA,
    INFO_REPLY_SCHEMA,
    MAX_TEXT,
    MOVE_REPLY_SCHEMA,
    MOVE_REQUEST_SCHEMA,
    PROTOCOL,
    SCHEMAS,
    START_NOTICE_SCHEMA,
    ProtocolError,
    WrongProtocolError,
    check,
)

__all__ = [
    "DEBUG_MAX_BYTES",
    "END_NOTICE_SCHEMA",
    "INFO_REPLY_SCHEMA",
    "MAX_TEXT",
    "MOVE_REPLY_SCHEMA",
    "MOVE_REQUEST_SCHEMA",
    "PROTOCOL",
    "SCHEMAS",
    "START_NOTICE_SCHEMA",
    "BotInfo",
    "Debug",
    "MoveRequest",
    "ProtocolError",
    "SeatInfo",
    "WireHistory",
    "WrongProtocolError",
    "anonymous_seat_names",
    "check",
    "end_notice",
    "game_block",
    "info_reply",
    "move_reply_debug",
    "move_request",
    "parse_info_reply",
    "parse_move_reply",
    "parse_move_request",
    "start_notice",
    "wire_lucky_deal",
    "wire_play",
]
