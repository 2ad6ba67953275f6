"""Command line of the bots SDK.

python -m bots_sdk serve mybot:choose --port 8001     run a bot as an escoba/1 server
python -m bots_sdk check http://127.0.0.1:8001        play scripted positions against it
python -m bots_sdk duel mybot:choose bots_sdk.examples.greedy:choose --games 200
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence

from .bot import Bot
from .check import DEFAULT_TIMEOUT_MS, run_check
from .local import TIMEOUT_MS, duel
from .server import serve

SECRET_ENV = "ESCOBA_BOT_SECRET"


def load_target(spec: str) -> Bot | object:
    """Import `module:attribute` (attribute defaults to `choose`) from the current directory too."""
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
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
        default=TIMEOUT_MS,
        help=f"time each move may take, as the requests say (default {TIMEOUT_MS})",
    )
    return parser


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
    if args.command == "duel":
        first, second = load_target(args.first), load_target(args.second)
        result = duel(first, second, games=args.games, seed=args.seed, timeout_ms=args.timeout_ms)
        sys.stdout.write(
            f"{args.first} against {args.second}, {result.games} games with seats swapped: "
            f"{result.wins} won, {result.losses} lost, {result.draws} drawn "
            f"({result.win_rate:.1%} of decided games)\n"
        )
        return 0
    report = run_check(args.url, secret=args.secret, timeout_ms=args.timeout_ms)
    sys.stdout.write(
        json.dumps(report.to_dict(), indent=2) + "\n" if args.json else report.to_text()
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
