from django.db import migrations, models


class Migration(migrations.Migration):
    """The address an owner confirmed: addresses given before this are unconfirmed, and get no
    notification mail until their owner sets them again and follows the link."""

    dependencies = [("tournaments", "0013_abuse_hashed_tokens")]

    operations = [
        migrations.AddField(
            model_name="notificationsettings",
            name="verified_email",
            field=models.CharField(blank=True, max_length=254),
        ),
    ]
