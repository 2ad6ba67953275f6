"""Matches, games and seats order by their key's columns (``league_id``, ``match_id``,
``game_id``) rather than by the foreign key, which sorted every read that named no order through
the related model's own ordering, down to League's ``-created_at``: up to three joins to sort.
Only the models' options change; no column or index does."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0010_head_to_head"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="game",
            options={"ordering": ["match_id", "number"]},
        ),
        migrations.AlterModelOptions(
            name="match",
            options={"ordering": ["league_id", "number"], "verbose_name_plural": "matches"},
        ),
        migrations.AlterModelOptions(
            name="seat",
            options={"ordering": ["game_id", "seat"]},
        ),
    ]
