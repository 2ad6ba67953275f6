"""``GameLog.diagnostics_gzip``'s default becomes the callable ``packed.empty_list``.

Migration 0009 froze the bytes of ``pack([])``, and those bytes depend on the compressor (zlib
then, libdeflate now), so ``makemigrations --check`` saw a change that was none. Django keeps a
field's default in Python, not in the table: the change is to the migration state only, and no
SQL runs (SQLite would otherwise copy the whole table of logs to alter it).
"""

from django.db import migrations, models

import tournaments.packed


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0024_rescore_sets_by_points"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="gamelog",
                    name="diagnostics_gzip",
                    field=models.BinaryField(
                        default=tournaments.packed.empty_list,
                        help_text="Per move request: latency, fault, debug, request.",
                    ),
                ),
            ],
        ),
    ]
