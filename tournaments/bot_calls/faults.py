"""Bot faults as the service's bot caller reports them: the kinds, their messages and the fault
policy are `games.faults`, the one copy the SDK's league and duel referee with too."""

from games.faults import (
    DEFAULT_MAX_FAULTS,
    FAULT_MESSAGES,
    Fault,
    FaultKind,
    fallback_move,
    forfeits,
)

__all__ = [
    "DEFAULT_MAX_FAULTS",
    "FAULT_MESSAGES",
    "Fault",
    "FaultKind",
    "fallback_move",
    "forfeits",
]
