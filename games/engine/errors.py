"""Typed errors, so callers can tell a malformed move from an illegal one (as python-chess does)."""

from __future__ import annotations


class EscobaError(ValueError):
    """Base of every error the engine raises on bad input."""


class InvalidCardError(EscobaError):
    """A card's text form is not one of the 40 canonical forms ("1o" ... "10b")."""


class InvalidMoveError(EscobaError):
    """A move is malformed: it cannot be a move in any position."""


class IllegalMoveError(EscobaError):
    """A well-formed move that the rules forbid here.

    ``code`` is a short machine-readable reason (``card_not_in_hand``, ``cards_not_on_table``,
    ``sum_not_15``, ``must_capture``, ``game_over``); the message explains it to a person.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RulesetError(EscobaError):
    """A ruleset cannot be built; ``problems`` lists every reason, not just the first."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid ruleset: " + "; ".join(problems))
        self.problems = list(problems)


class InvalidLogError(EscobaError):
    """A game log breaks the format or the rules; ``round`` and ``play`` (1-based) say where."""

    def __init__(self, message: str, round: int | None = None, play: int | None = None) -> None:
        where = ""
        if round is not None:
            where = f"round {round}"
            if play is not None:
                where += f", play {play}"
            where += ": "
        super().__init__(where + message)
        self.round = round
        self.play = play
        self.message = message
