"""The service and the SDK in one process share one copy of the engine and the wire format."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import bots_sdk
import bots_sdk.bot
import bots_sdk.http_transport
import bots_sdk.state
import games.engine
import games.protocol_check
import games.signing
import games.wire
import tournaments.bot_calls.caller
import tournaments.bot_calls.runner
import tournaments.services.bots

ROOT = Path(__file__).resolve().parents[2]


def test_the_sdk_and_the_service_use_the_same_classes():
    assert bots_sdk.Move is games.engine.Move
    assert bots_sdk.Card is games.engine.Card
    assert bots_sdk.ProtocolError is games.wire.ProtocolError
    assert bots_sdk.CheckReport is games.protocol_check.CheckReport
    assert tournaments.services.bots.CheckReport is games.protocol_check.CheckReport
    assert tournaments.bot_calls.caller.Signer is games.signing.Signer
    assert bots_sdk.state.MoveRequest is games.wire.MoveRequest
    assert tournaments.bot_calls.runner.Move is games.engine.Move


def test_no_module_of_ours_is_loaded_twice():
    """Every file of games/ and bots_sdk/ is imported under one name only (symlinked copies
    would show up as a second name for the same file, or a second file for the same code)."""
    names_by_file: dict[Path, list[str]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path is None:
            continue
        names_by_file.setdefault(Path(path).resolve(), []).append(name)
    ours = {
        path: names
        for path, names in names_by_file.items()
        if path.is_relative_to(ROOT / "games") or path.is_relative_to(ROOT / "bots_sdk")
    }
    assert ours and all(len(names) == 1 for names in ours.values()), ours
    assert "bots_sdk.engine" not in sys.modules and "bots_sdk.protocol" not in sys.modules
    classes = {
        id(value)
        for module in list(sys.modules.values())
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__name__ == "Move"
        and value.__module__.startswith(("games", "bots_sdk"))
    }
    assert classes == {id(games.engine.Move)}


def test_an_sdk_error_is_caught_as_the_wire_formats_error(sample_request):
    sample_request["you"]["hand"] = ["11o"]
    with pytest.raises(games.wire.ProtocolError, match=r"you.hand\[0\]"):
        bots_sdk.BotState.from_request(sample_request)
    caught = None
    try:
        bots_sdk.Bot(lambda state: state.legal_moves[0]).move({"protocol": "escoba/1"})
    except games.wire.ProtocolError as error:
        caught = error
    assert caught is not None and "missing 'game'" in str(caught)
