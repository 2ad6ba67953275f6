"""``python manage.py ratings_recompute``: replay every rated game, compare with stored Elo."""

from django.core.management.base import BaseCommand, CommandError

from tournaments.services.ratings import ratings_recompute


class Command(BaseCommand):
    help = (
        "Replay all rated games in the order they were applied, from 1500 for every bot, and "
        "check that the stored rating changes and ratings are reproduced exactly."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--write",
            action="store_true",
            help="Store the replayed values where they differ (otherwise only report).",
        )

    def handle(self, *args, write: bool, **options):
        report = ratings_recompute(write=write)
        for line in report.mismatches[:50]:
            self.stdout.write(line)
        summary = f"{report.games} games replayed, {report.ratings} ratings compared"
        if report.exact:
            self.stdout.write(self.style.SUCCESS(f"{summary}: all reproduced exactly."))
        elif write:
            self.stdout.write(self.style.WARNING(f"{summary}: {len(report.mismatches)} corrected."))
        else:
            raise CommandError(f"{summary}: {len(report.mismatches)} differ (see above).")
