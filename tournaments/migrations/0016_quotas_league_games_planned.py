"""A round robin records the games of its whole schedule when it starts (``games_planned``):
the schedule is then written in batches in the background."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0015_ops_match_running"),
    ]

    operations = [
        migrations.AddField(
            model_name="league",
            name="games_planned",
            field=models.PositiveIntegerField(
                default=0,
                help_text=(
                    "Games of the whole schedule, set when a round robin starts: its schedule is "
                    "written in batches in the background, and the league is not finished before "
                    "all are. 0 for leagues that grow set by set."
                ),
            ),
        ),
    ]
