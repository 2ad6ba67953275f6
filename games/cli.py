"""``python -m games``: play random games and check game logs from the command line.

    python -m games selfplay --ruleset classic --set target=15 --players 2 --seed 7 [--games N]
    python -m games validate FILE
    python -m games info                 which build of the engine runs (compiled or pure Python)

Bad arguments print one line to stderr and exit with status 2; ``validate`` exits with 1 at the
first log that breaks a rule, saying which game, round and play.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, TextIO

from . import engine
from .engine import DEFAULT_PRESET, EscobaError, Game, InvalidLogError, Ruleset, validate_log


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class UsageError(Exception):
    """A bad argument: reported in one line with exit status 2."""


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as a bool (true/false), an int, or else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise UsageError(f"--set needs key=value, not {text!r}")
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    try:
        return key, int(raw)
    except ValueError:
        return key, raw


def random_game(ruleset: Ruleset, seed: int) -> dict[str, Any]:
    """One game of uniformly random legal play; the choices are seeded too, so it repeats."""
    game = Game.new(ruleset, seed)
    chooser = random.Random(f"selfplay/{seed}")
    while not game.is_over:
        game.apply(chooser.choice(game.legal_moves()))
    return game.log()


def selfplay(args: argparse.Namespace, out: TextIO) -> int:
    overrides = dict(parse_option(text) for text in args.set)
    if args.players is not None:
        if overrides.get("players", args.players) != args.players:
            raise UsageError(
                f"--players {args.players} contradicts --set players={overrides['players']}"
            )
        overrides["players"] = args.players
    try:
        ruleset = Ruleset.from_preset(args.ruleset, overrides)
    except EscobaError as error:
        raise UsageError(str(error)) from None
    if args.games < 1:
        raise UsageError("--games must be at least 1")
    for number in range(args.games):
        log = random_game(ruleset, args.seed + number)
        indent = 2 if args.games == 1 else None
        out.write(json.dumps(log, indent=indent) + "\n")
    return 0


def read_logs(text: str) -> Iterator[tuple[int, Any]]:
    """The logs in ``text``: one JSON document, or one per line; numbered from 1."""
    try:
        yield 1, json.loads(text)
        return
    except json.JSONDecodeError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    for number, line in enumerate(lines, 1):
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidLogError(f"game {number}: not JSON: {error}") from None


def validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {args.file}: {error}") from None
    count = 0
    try:
        for number, doc in read_logs(text):
            try:
                validate_log(doc)
            except InvalidLogError as error:
                err.write(f"{args.file}: game {number}, {error}\n")
                return 1
            count = number
    except InvalidLogError as error:
        err.write(f"{args.file}: {error}\n")
        return 1
    if count == 0:
        err.write(f"{args.file}: no game log in the file\n")
        return 1
    out.write(f"{args.file}: {count} valid game log{'s' if count != 1 else ''}\n")
    return 0


def info(out: TextIO) -> int:
    """Say which build of the engine this interpreter runs, and why (see games/engine/_build.py)."""
    name = "compiled" if engine.BUILD == "compiled" else "pure Python"
    out.write(f"escoba engine: {name} build ({engine.BUILD_REASON})\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m games", description="Escoba rules engine tools.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    play = commands.add_parser("selfplay", help="print the logs of random legal games")
    play.add_argument("--ruleset", default=DEFAULT_PRESET, help="preset name, e.g. classic")
    play.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override an option, e.g. target=15 or teams=true",
    )
    play.add_argument("--players", type=int, choices=(2, 3, 4))
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--games", type=int, default=1, help="N games: one JSON document a line")
    check = commands.add_parser("validate", help="check game logs against the rules")
    check.add_argument("file", help="a log, or a file of logs one per line")
    commands.add_parser("info", help="say which build of the engine runs: compiled or pure Python")
    return parser


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "selfplay":
            return selfplay(args, out)
        if args.command == "info":
            return info(out)
        return validate(args, out, err)
    except UsageError as error:
        err.write(f"{parser.prog} {args.command}: error: {error}\n")
        return 2
