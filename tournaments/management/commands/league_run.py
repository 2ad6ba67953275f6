"""``python manage.py league_run``: create and start a league, follow it, print the standings.

By default the matches go to the Celery workers, as from the API, and this command only watches
(a live progress bar). ``--inline`` plays them in this process instead, many at once, for a
machine without a worker. ``--detach`` starts the league and returns at once.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections
from django.db.models.functions import Lower
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from games.engine import DEFAULT_PRESET
from games.faults import DEFAULT_TIMEOUT_MS
from tournaments.messages import QUEUE_UNAVAILABLE
from tournaments.models import Bot, League, Match
from tournaments.selectors.leagues import bots_schedulable, league_progress, league_standings
from tournaments.services.league_creation import league_create, league_name_free, system_user
from tournaments.services.league_schedules import league_start
from tournaments.services.league_states import QueueUnavailable
from tournaments.services.matches import match_play

OPERATOR_USERNAME = "operator"
FINISHED = (League.Status.FINISHED, League.Status.CANCELLED)


class Command(BaseCommand):
    help = (
        "Create a league from the command line, run it with a live progress bar, print standings."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--name",
            default="Command-line league",
            help='A taken name gets the first free number: "name (2)", "name (3)"...',
        )
        parser.add_argument("--bots", help="Comma-separated bot names (default: every fit bot).")
        parser.add_argument("--ruleset", default=DEFAULT_PRESET, help="Preset name.")
        parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
        parser.add_argument("--games-per-pairing", type=int)
        parser.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS)
        parser.add_argument("--max-faults", type=int)
        parser.add_argument("--unrated", action="store_true")
        parser.add_argument(
            "--creator", default=OPERATOR_USERNAME, help="Username (made if absent)."
        )
        parser.add_argument("--inline", action="store_true", help="Play here, not in a worker.")
        parser.add_argument("--threads", type=int, default=32, help="Matches in flight (--inline).")
        parser.add_argument("--detach", action="store_true", help="Start and return at once.")

    def handle(self, *args, **options):
        console = Console(file=self.stdout)
        league = self._create(options)
        try:
            league = league_start(league_id=league.id, enqueue=not options["inline"])
        except QueueUnavailable:
            raise CommandError(
                f"{QUEUE_UNAVAILABLE} League {league.id} stays open: start it again later."
            ) from None
        console.print(f"League {league.id} '{league.name}' started ({league.pool}).")
        if options["detach"]:
            return
        started = time.perf_counter()
        if options["inline"]:
            with ThreadPoolExecutor(options["threads"]) as pool:
                ids = list(league.matches.order_by("number").values_list("id", flat=True))
                futures = [pool.submit(self._play, match_id) for match_id in ids]
                self._follow(console, league, lambda: all(f.done() for f in futures))
                for future in futures:
                    future.result()
        else:
            self._follow(console, league, lambda: False)
        league.refresh_from_db()
        seconds = time.perf_counter() - started
        moves = sum(league.games.values_list("moves", flat=True))
        console.print(
            f"{league.status} in {seconds:.1f}s: {moves} moves, {moves / seconds:.0f} moves/s."
        )
        console.print(self._standings_table(league))

    def _create(self, options) -> League:
        if options["bots"]:
            names = [name.strip() for name in options["bots"].split(",") if name.strip()]
            # Bot names are unique ignoring case, so "Greedy" finds greedy.
            wanted = Bot.objects.annotate(key=Lower("name")).filter(
                key__in=[n.lower() for n in names]
            )
            bots = {bot.key: bot.id for bot in wanted}
            missing = [name for name in names if name.lower() not in bots]
            if missing:
                raise CommandError(f"Unknown bots: {', '.join(missing)}")
            bot_ids = [bots[name.lower()] for name in names]
        else:
            bot_ids = list(bots_schedulable().order_by("id").values_list("id", flat=True))
        extra = {} if options["max_faults"] is None else {"max_faults": options["max_faults"]}
        try:
            return league_create(
                creator=system_user(options["creator"]),
                name=league_name_free(options["name"]),
                ruleset_name=options["ruleset"],
                players=options["players"],
                games_per_pairing=options["games_per_pairing"],
                move_timeout_ms=options["timeout_ms"],
                rated=not options["unrated"],
                bot_ids=bot_ids,
                **extra,
            )
        except ValidationError as error:
            raise CommandError(
                "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
            ) from None

    @staticmethod
    def _play(match_id: int) -> None:
        """Play a match here; one released by the service's fault is played again after a
        pause, as a worker would (``services.matches``)."""
        try:
            outcome = match_play(match_id=match_id)
            while outcome.status == "released" and not outcome.stopping:
                time.sleep(outcome.retry_in_s)
                outcome = match_play(match_id=match_id)
        finally:
            close_old_connections()

    def _follow(self, console: Console, league: League, done) -> None:
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
        columns += [TextColumn("faults {task.fields[faults]}"), TimeElapsedColumn()]
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("games", total=None, faults=0)
            while True:
                league.refresh_from_db(fields=["status"])
                figures = league_progress(league)
                progress.update(
                    task,
                    completed=figures["done"],
                    total=figures["total"],
                    faults=figures["faults"],
                )
                if league.status in FINISHED or done():
                    break
                if not league.matches.exclude(status=Match.Status.FINISHED).exists():
                    break
                time.sleep(0.25)

    @staticmethod
    def _standings_table(league: League) -> Table:
        table = Table(title=f"{league.name} — standings")
        headings = ["#", "bot", "pts", "W", "D", "L", "for", "against", "sets W-D-L", "faults"]
        for heading in [*headings, "rating (pool)"]:
            table.add_column(heading, justify="left" if heading == "bot" else "right")
        for place, row in enumerate(league_standings(league), start=1):
            rating = "" if row["rating"] is None else f"{row['rating']:.0f}"
            table.add_row(
                str(place),
                row["bot"],
                f"{row['points']:g}",
                str(row["wins"]),
                str(row["draws"]),
                str(row["losses"]),
                str(row["points_for"]),
                str(row["points_against"]),
                f"{row['sets_won']}-{row['sets_drawn']}-{row['sets_lost']}",
                str(row["faults"]),
                rating + ("?" if row["provisional"] else ""),
            )
        return table
