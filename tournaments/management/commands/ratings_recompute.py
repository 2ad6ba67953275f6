"""``python manage.py ratings_recompute``: fit every pool afresh and compare with what is published.

It is the same fit the ``ratings.fit_pool`` task runs after results (``services.rating_fits``): the
ratings depend only on the rated sets, so a fresh fit must reproduce the published figures to the
cent. ``--write`` publishes the fresh fits (a new point in each history).
"""

from django.core.management.base import BaseCommand, CommandError

from tournaments.services.rating_fits import ratings_recompute


class Command(BaseCommand):
    help = (
        "Fit every pool's ratings afresh from its rated sets and check that the published "
        "ratings, intervals, ranks and LOS are reproduced exactly."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--write",
            action="store_true",
            help="Publish the fresh fits (otherwise only report differences).",
        )
        parser.add_argument("--pool", help="Only this pool, e.g. classic/2p.")

    def handle(self, *args, write: bool, pool: str | None, **options):
        report = ratings_recompute(write=write, pool=pool)
        for line in report.mismatches[:50]:
            self.stdout.write(line)
        summary = (
            f"{report.pools} pools, {report.sets} rated sets fitted, "
            f"{report.ratings} ratings compared"
        )
        if report.exact:
            self.stdout.write(self.style.SUCCESS(f"{summary}: all reproduced exactly."))
        elif write:
            self.stdout.write(self.style.WARNING(f"{summary}: {len(report.mismatches)} corrected."))
        else:
            raise CommandError(f"{summary}: {len(report.mismatches)} differ (see above).")
