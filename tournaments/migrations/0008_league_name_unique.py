"""League names are unique without regard to case (issue 14).

Databases from before the rule may hold the same name twice (the demo league of every
`make run`, say): all but the oldest of each name get " (2)", " (3)"... first, so the constraint
can be added.
"""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


def numbered(name, number):
    suffix = f" ({number})"
    return name[: 100 - len(suffix)] + suffix


def rename_duplicates(apps, schema_editor):
    League = apps.get_model("tournaments", "League")
    taken = set()
    renamed = []
    for league in League.objects.order_by("created_at", "id").only("id", "name"):
        name = league.name
        if name.lower() in taken:
            number = 2
            while numbered(name, number).lower() in taken:
                number += 1
            name = numbered(name, number)
            renamed.append((league.id, name))
        taken.add(name.lower())
    for league_id, name in renamed:
        League.objects.filter(id=league_id).update(name=name)


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0007_read_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(rename_duplicates, migrations.RunPython.noop, elidable=True),
        migrations.AddConstraint(
            model_name="league",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("name"), name="league_name_unique"
            ),
        ),
    ]
