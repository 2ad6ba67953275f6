"""Replaying and validating ``escoba-log/1`` documents.

A log is checked by playing it again through the engine: the seed fixes every deal, so the deals,
the plays, the escobas, the scores and the result must all come out identical. The first
difference is reported with the round and play (both 1-based) where it happens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import EscobaError, IllegalMoveError, InvalidLogError, InvalidMoveError
from .moves import Move
from .rulesets import Ruleset
from .scoring import BREAKDOWN_KEYS
from .state import Game, _round_log, decode_play

LOG_FORMAT = "escoba-log/1"
_ROUND_KEYS = ("dealer", "table", "lucky_deal", "deals", "plays", "leftover", "score", "totals")
_PLAY_KEYS = {"seat", "card", "capture", "escoba"}


def replay_log(doc: Mapping[str, Any]) -> Game:
    """Play ``doc`` again and return the game; ``InvalidLogError`` at the first broken rule."""
    game = _new_game(doc)
    rounds = doc.get("rounds")
    if not isinstance(rounds, list):
        raise InvalidLogError("'rounds' must be a list")
    result = doc.get("result")
    for number, logged in enumerate(rounds, 1):
        if game.is_over:
            raise InvalidLogError("the game was already over before this round", number)
        _replay_round(game, number, logged, last=number == len(rounds), result=result)
    _replay_result(game, result)
    expected = game.log()
    for expected_round, logged in zip(expected["rounds"], rounds, strict=False):
        if isinstance(logged, Mapping):
            expected_round["score"] = _as_logged(expected_round["score"], logged.get("score"))
    if _differs(expected, doc):
        path, where = _first_difference(expected, doc)
        raise InvalidLogError(f"the log differs from the replay at {path}", *where)
    return game


def validate_log(doc: Mapping[str, Any]) -> None:
    """Check ``doc`` against the format and the rules; ``InvalidLogError`` says where it breaks."""
    replay_log(doc)


def _new_game(doc: Mapping[str, Any]) -> Game:
    if not isinstance(doc, Mapping):
        raise InvalidLogError("a log must be a JSON object")
    if doc.get("format") != LOG_FORMAT:
        raise InvalidLogError(f"'format' must be {LOG_FORMAT!r}, not {doc.get('format')!r}")
    try:
        ruleset = Ruleset.from_dict(doc.get("ruleset"))  # type: ignore[arg-type]
    except EscobaError as error:
        raise InvalidLogError(f"bad ruleset: {error}") from None
    seed = doc.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InvalidLogError(f"'seed' must be an integer, not {seed!r}")
    game = Game.new(ruleset, seed)
    expected_seats = [{"seat": s, "team": ruleset.team_of(s)} for s in range(ruleset.players)]
    if doc.get("seats") != expected_seats:
        raise InvalidLogError(f"'seats' must be {expected_seats} for this ruleset")
    return game


def _replay_round(game: Game, number: int, logged: Any, *, last: bool, result: Any) -> None:
    if not isinstance(logged, Mapping):
        raise InvalidLogError("a round must be an object", number)
    record = game._record
    engine = _round_log(record, game.ruleset.players, game.ruleset.options)
    for key in ("dealer", "table", "lucky_deal"):
        if logged.get(key) != engine[key]:
            raise InvalidLogError(
                f"{key} is {logged.get(key)!r} but the seed and rules give {engine[key]!r}", number
            )
    plays = logged.get("plays")
    if not isinstance(plays, list):
        raise InvalidLogError("'plays' must be a list", number)
    for index, play in enumerate(plays, 1):
        _replay_play(game, record, number, index, play)
    engine = _round_log(record, game.ruleset.players, game.ruleset.options)
    if logged.get("deals") != engine["deals"]:
        raise InvalidLogError("deals do not match the seed's shuffle", number)
    if engine["score"] is None:
        forfeit = isinstance(result, Mapping) and result.get("reason") == "forfeit"
        if not last or not (forfeit or result is None):
            raise InvalidLogError("the round stops before every card was played", number)
    engine["score"] = _as_logged(engine["score"], logged.get("score"))
    for key in ("leftover", "score", "totals"):
        if logged.get(key) != engine[key]:
            raise InvalidLogError(
                f"{key} is {logged.get(key)!r} but the rules give {engine[key]!r}", number
            )


def _as_logged(score: list[dict[str, Any]] | None, logged: Any) -> list[dict[str, Any]] | None:
    """The engine's score of a round as a log written before the breakdown was added shows it.

    A side that has none of ``BREAKDOWN_KEYS`` is an older log's, and the replay drops them for
    it; a side with only some of them is compared whole, and so is reported as damaged.
    """
    if score is None or not isinstance(logged, list) or len(logged) != len(score):
        return score
    return [
        {key: value for key, value in side.items() if key not in BREAKDOWN_KEYS}
        if isinstance(old, Mapping) and not any(key in old for key in BREAKDOWN_KEYS)
        else side
        for side, old in zip(score, logged, strict=True)
    ]


def _replay_play(game: Game, record: Any, number: int, index: int, play: Any) -> None:
    if not isinstance(play, Mapping) or set(play) != _PLAY_KEYS:
        raise InvalidLogError(
            f"a play must be an object with exactly {sorted(_PLAY_KEYS)}", number, index
        )
    if game.is_over or game._record is not record:
        raise InvalidLogError("no play is left in this round", number, index)
    if play["seat"] != game.current_seat:
        raise InvalidLogError(
            f"seat {play['seat']!r} played but it was seat {game.current_seat}'s turn",
            number,
            index,
        )
    try:
        move = Move.from_wire({"card": play["card"], "capture": play["capture"]})
        game.apply(move)
    except (InvalidMoveError, IllegalMoveError) as error:
        raise InvalidLogError(f"illegal play {play['card']!r}: {error}", number, index) from None
    escoba = decode_play(record.plays[-1])[2]
    if play["escoba"] is not escoba:
        raise InvalidLogError(f"escoba is {play['escoba']!r} but should be {escoba}", number, index)


def _replay_result(game: Game, result: Any) -> None:
    if result is None:
        if game.is_over:
            raise InvalidLogError("'result' is missing although the game is over")
        return
    if not isinstance(result, Mapping):
        raise InvalidLogError("'result' must be an object or null")
    if result.get("reason") == "forfeit" and not game.is_over:
        seat = result.get("forfeit_seat")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise InvalidLogError(f"'forfeit_seat' must be a seat, not {seat!r}")
        reason = result.get("forfeit_reason")
        try:
            game.forfeit(seat, reason if isinstance(reason, str) else "faults")
        except EscobaError as error:
            raise InvalidLogError(f"bad forfeit: {error}") from None
    if not game.is_over:
        raise InvalidLogError("the log ends but the rules say the game goes on")


def _first_difference(expected: Any, actual: Any, path: str = "") -> tuple[str, tuple[Any, ...]]:
    """The JSON path of the first place where ``actual`` differs, with its (round, play)."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in list(expected) + [k for k in actual if k not in expected]:
            if _differs(expected.get(key, _MISSING), actual.get(key, _MISSING)):
                return _first_difference(expected.get(key), actual.get(key), f"{path}.{key}")
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            if _differs(left, right):
                return _first_difference(left, right, f"{path}[{index}]")
    parts = path.split(".")
    where: tuple[Any, ...] = ()
    if len(parts) > 1 and parts[1].startswith("rounds["):
        where = (int(parts[1][7:-1]) + 1,)
        if len(parts) > 2 and parts[2].startswith("plays["):
            where += (int(parts[2][6:-1]) + 1,)
    return path or ".", where


def _differs(expected: Any, actual: Any) -> bool:
    """Whether two values differ as JSON: unlike ``==``, ``true`` is not ``1`` and ``1.0`` is not
    ``1``, so a log must repeat the replay's exact types, not just equal values."""
    if expected is _MISSING or actual is _MISSING:
        return expected is not actual
    try:
        return json.dumps(expected, sort_keys=True) != json.dumps(actual, sort_keys=True)
    except (TypeError, ValueError):  # not JSON at all: a set, keys of mixed types ...
        return True


_MISSING = object()
