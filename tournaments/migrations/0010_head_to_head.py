# Written for the bot profile at 100,000 games (issue 15, item 1).
"""A bot's profile reads its head to head from running totals and its recent games from an index.

``HeadToHead`` holds, per bot and opponent, the finished games, wins and draws that
``game_finish`` now adds as it stores each game; ``Seat.finished_at`` copies its game's time of a
result, so a bot's last finished games are the top of one index (``seat_bot_finished``) rather
than all its games joined to the game table and sorted. Both are filled here from the finished
games, in batches; going back drops them.
"""

from collections import Counter, defaultdict
from itertools import groupby
from operator import itemgetter

from django.db import migrations, models
from django.db.models import OuterRef, Subquery

BATCH = 5000


def fill(apps, schema_editor) -> None:
    Game = apps.get_model("tournaments", "Game")
    Seat = apps.get_model("tournaments", "Seat")
    HeadToHead = apps.get_model("tournaments", "HeadToHead")
    Seat.objects.filter(game__status="finished").update(
        finished_at=Subquery(Game.objects.filter(pk=OuterRef("game_id")).values("finished_at"))
    )
    games, wins, draws = Counter(), Counter(), Counter()
    seats = (
        Seat.objects.filter(game__status="finished")
        .order_by("game_id", "seat")
        .values_list("game_id", "bot_id", "team", "game__winner")
    )
    # One game at a time, as ``services.matches.head_to_head_add`` counts it.
    for _, table in groupby(seats.iterator(chunk_size=BATCH), key=itemgetter(0)):
        table = list(table)
        teams = defaultdict(set)
        for _, bot, team, _ in table:
            teams[bot].add(team)
        winner = table[0][3]
        pairs = {(a, b) for _, a, ta, _ in table for _, b, tb, _ in table if ta != tb and a != b}
        for pair in pairs:
            games[pair] += 1
            wins[pair] += int(winner in teams[pair[0]])
            draws[pair] += int(winner is None)
    HeadToHead.objects.bulk_create(
        (
            HeadToHead(bot_id=a, opponent_id=b, games=n, wins=wins[a, b], draws=draws[a, b])
            for (a, b), n in sorted(games.items())
        ),
        batch_size=BATCH,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0009_compact_logs"),
    ]

    operations = [
        migrations.CreateModel(
            name="HeadToHead",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("games", models.PositiveIntegerField(default=0)),
                ("wins", models.PositiveIntegerField(default=0)),
                ("draws", models.PositiveIntegerField(default=0)),
                (
                    "bot",
                    models.ForeignKey(
                        on_delete=models.deletion.PROTECT,
                        related_name="+",
                        to="tournaments.bot",
                    ),
                ),
                (
                    "opponent",
                    models.ForeignKey(
                        on_delete=models.deletion.PROTECT,
                        related_name="+",
                        to="tournaments.bot",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "head to head totals",
                "ordering": ["bot", "opponent"],
                "constraints": [
                    models.UniqueConstraint(fields=("bot", "opponent"), name="head_to_head_once")
                ],
            },
        ),
        migrations.AddField(
            model_name="seat",
            name="finished_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the game finished with a result (the game's own time); empty "
                "while it is played and for an aborted game.",
                null=True,
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=False),
        migrations.AddIndex(
            model_name="seat",
            index=models.Index(
                condition=models.Q(("finished_at__isnull", False)),
                fields=["bot", "-finished_at", "-game"],
                name="seat_bot_finished",
            ),
        ),
    ]
