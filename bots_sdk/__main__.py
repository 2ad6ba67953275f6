"""Command line of the bots SDK.

python -m bots_sdk serve mybot:choose --port 8001     run a bot as an escoba/1 server
python -m bots_sdk check http://127.0.0.1:8001        play scripted positions against it
python -m bots_sdk duel mybot:choose bots_sdk.examples.greedy:choose --games 200
python -m bots_sdk league mybot:choose bots_sdk.examples.greedy:choose http://127.0.0.1:8002
python -m bots_sdk replay request.json --bot mybot:choose        (or --url http://127.0.0.1:8001)
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from games.engine import DEFAULT_PRESET
from games.protocol_check import DEFAULT_TIMEOUT_MS

from .bot import Bot
from .http_transport import run_check
from .league import HttpPlayer, LeagueError, LocalPlayer, Player, is_url, run_league
from .local import duel
from .progress import Progress
from .replay import (
    EXIT_CANNOT_RUN,
    EXIT_LEGAL,
    EXIT_WRONG,
    ReplayError,
    load_request,
    replay_http,
    replay_local,
)
from .server import serve

SECRET_ENV = "ESCOBA_BOT_SECRET"


def load_target(spec: str) -> Bot | object:
    """Import `module:attribute` (attribute defaults to `choose`) from the current directory too."""
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"{spec}: cannot import {module_name}: {exc}") from None
    target = getattr(module, attribute or "choose", None)
    if target is None or not callable(target) and not isinstance(target, Bot):
        raise SystemExit(f"{spec}: no function {attribute or 'choose'!r} in {module_name}")
    return target


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bots_sdk",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("serve", help="run a bot as an escoba/1 HTTP server")
    run.add_argument("target", help="module:function, e.g. mybot:choose")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8001)
    run.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"signing secret (whsec_...); default ${SECRET_ENV}",
    )
    run.add_argument("--name", help="name shown by GET / (default: the module name)")
    run.add_argument("--log-level", default="info")

    check = commands.add_parser("check", help="play scripted positions against a live bot")
    check.add_argument("url")
    check.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"sign requests with this secret; default ${SECRET_ENV}",
    )
    check.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS)
    check.add_argument("--json", action="store_true", help="print the report as JSON")

    match = commands.add_parser("duel", help="play two bots against each other in-process")
    match.add_argument("first", help="module:function")
    match.add_argument("second", help="module:function")
    match.add_argument("--games", type=int, default=100)
    match.add_argument("--seed", type=int, default=0)
    match.add_argument(
        "--timeout-ms",
        type=int,
        default=DEFAULT_TIMEOUT_MS,
        help=f"time each move may take, as the requests say (default {DEFAULT_TIMEOUT_MS})",
    )

    league = commands.add_parser(
        "league",
        help="a round robin of duplicate sets, scored and rated as the arena does",
        description="Each BOT is module:function (played in this process) or a bot's URL.",
    )
    league.add_argument("bots", nargs="+", metavar="BOT", help="module:function or http(s) URL")
    league.add_argument("--sets", type=int, default=2, help="duplicate sets per pairing")
    league.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    league.add_argument(
        "--ruleset",
        default=DEFAULT_PRESET,
        help='a preset name, or JSON {"name": ..., "options": ...}',
    )
    league.add_argument("--seed", type=int, default=0)
    league.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS)
    league.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"sign calls to the URL bots with this secret; default ${SECRET_ENV}",
    )
    league.add_argument("--json", action="store_true", help="print the results as JSON")
    league.add_argument("--quiet", action="store_true", help="no progress on stderr")

    replay = commands.add_parser(
        "replay",
        help="ask a bot again for one recorded move request and judge its answer",
        description=(
            "REQUEST is a JSON file: the body of POST U/move as the arena sent it (download it "
            "from the replay), or a diagnostics play with that body in `request`. Exit status: "
            f"{EXIT_LEGAL} a legal move in time, {EXIT_WRONG} a wrong, late or failed answer, "
            f"{EXIT_CANNOT_RUN} the file or the bot could not be used."
        ),
    )
    replay.add_argument("request", help="the request file")
    target = replay.add_mutually_exclusive_group(required=True)
    target.add_argument("--bot", help="module:function, run in this process")
    target.add_argument("--url", help="the bot's URL, called over HTTP")
    replay.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"sign the call to --url with this secret; default ${SECRET_ENV}",
    )
    replay.add_argument(
        "--timeout-ms", type=int, help="the deadline for --url (default: the request's timeout_ms)"
    )
    replay.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _print(result: Any, *, as_json: bool) -> None:
    """A report object with `to_dict` and `to_text`, as JSON or as text."""
    sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n" if as_json else result.to_text())


def _league(args: argparse.Namespace) -> int:
    try:
        text = args.ruleset
        ruleset = json.loads(text) if text.lstrip().startswith("{") else text
    except ValueError as exc:
        raise SystemExit(f"--ruleset: not JSON: {exc}") from None
    players: list[Player] = []
    try:
        for spec in args.bots:
            if is_url(spec):
                players.append(HttpPlayer(spec, secret=args.secret, timeout_ms=args.timeout_ms))
            else:
                players.append(LocalPlayer(load_target(spec)))
        progress = None if args.quiet else Progress(sys.stderr, label="games")
        report = run_league(
            players, table_size=args.players, sets=args.sets, ruleset=ruleset, seed=args.seed,
            timeout_ms=args.timeout_ms, progress=progress,
        )  # fmt: skip
        if progress is not None:
            progress.finish()
    except LeagueError as exc:
        raise SystemExit(f"league: {exc}") from None
    finally:
        for player in players:
            player.close()
    _print(report, as_json=args.json)
    return 0


def _replay(args: argparse.Namespace) -> int:
    try:
        body = load_request(args.request)
        if args.url:
            result = replay_http(body, args.url, secret=args.secret, timeout_ms=args.timeout_ms)
        else:
            result = replay_local(body, load_target(args.bot))
    except ReplayError as exc:
        sys.stderr.write(f"replay: {exc}\n")
        return EXIT_CANNOT_RUN
    except SystemExit as exc:  # a --bot that cannot be imported
        sys.stderr.write(f"replay: {exc}\n")
        return EXIT_CANNOT_RUN
    _print(result, as_json=args.json)
    return EXIT_LEGAL if result.ok else EXIT_WRONG


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        logging.basicConfig(
            level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        try:
            serve(
                load_target(args.target),
                host=args.host,
                port=args.port,
                secret=args.secret,
                name=args.name,
            )
        except (ValueError, OSError) as exc:
            raise SystemExit(f"cannot serve {args.target}: {exc}") from None
        return 0
    if args.command == "league":
        return _league(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "duel":
        first, second = load_target(args.first), load_target(args.second)
        result = duel(first, second, games=args.games, seed=args.seed, timeout_ms=args.timeout_ms)
        sys.stdout.write(
            f"{args.first} against {args.second}, {result.games} games with seats swapped: "
            f"{result.wins} won, {result.losses} lost, {result.draws} drawn "
            f"({result.win_rate:.1%} of decided games)\n"
        )
        if result.faults or result.opponent_faults:
            sys.stdout.write(
                f"faults (each replaced by the fallback move): {args.first} {result.faults}, "
                f"{args.second} {result.opponent_faults}\n"
            )
        return 0
    report = run_check(args.url, secret=args.secret, timeout_ms=args.timeout_ms)
    sys.stdout.write(
        json.dumps(report.to_dict(), indent=2) + "\n" if args.json else report.to_text()
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
