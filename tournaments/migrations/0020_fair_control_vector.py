"""The baseline correction with a vector of controls and coefficients per band.

A coefficient fitted before (one beta on the sum of the greedy and random values) is the vector
(beta, beta) on (greedy, random), the same in every band: the translation is exact.
The scalar controls of sets corrected before are dropped (they cannot be split into the vector):
those sets keep their corrections, and the next fits read the sets corrected from now on."""

from django.db import migrations, models

BANDS = 2  # games.ratings.baseline.BAND_EDGES has one edge


def vector_coefficients(apps, schema_editor):
    coefficient = apps.get_model("tournaments", "BaselineCoefficient")
    for row in coefficient.objects.all():
        band = {
            "betas": [row.beta, row.beta],
            "samples": row.samples,
            "variance_removed": row.variance_removed,
        }
        row.bands = [band] * BANDS
        row.save(update_fields=["bands"])


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0019_people_play"),
    ]

    operations = [
        migrations.AddField(
            model_name="baselinecoefficient",
            name="bands",
            field=models.JSONField(
                default=list,
                help_text='Per band: {"betas": one per control, "samples": corrected sets it was '
                'fitted on, "variance_removed": share of the score\'s variance removed}.',
            ),
            preserve_default=False,
        ),
        migrations.RunPython(vector_coefficients, migrations.RunPython.noop),
        migrations.RemoveField(model_name="baselinecoefficient", name="beta"),
        migrations.RemoveField(model_name="baselinecoefficient", name="samples"),
        migrations.RemoveField(model_name="baselinecoefficient", name="variance_removed"),
        migrations.RemoveField(model_name="setscore", name="control"),
        migrations.AddField(
            model_name="setscore",
            name="controls",
            field=models.JSONField(
                blank=True,
                help_text="The luck of the set's deals for the player, one value per control "
                "(games.ratings.baseline.CONTROLS), weighted for the pair; null until every "
                "game's baseline value is in.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="setscore",
            name="band",
            field=models.PositiveSmallIntegerField(
                blank=True,
                help_text="The band of the pair's expected score whose coefficients corrected it.",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="dealbaseline",
            name="plays",
            field=models.PositiveIntegerField(help_text="Random plays."),
        ),
        migrations.AlterField(
            model_name="dealbaseline",
            name="policy",
            field=models.CharField(max_length=30),
        ),
        migrations.AlterField(
            model_name="dealbaseline",
            name="values",
            field=models.JSONField(
                help_text="Per team, per control: mean game points over the plays, centred."
            ),
        ),
    ]
