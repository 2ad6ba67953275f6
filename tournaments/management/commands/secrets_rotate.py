"""``python manage.py secrets_rotate``: encrypt every stored secret again under the first key of
``ESCOBA_SECRETS_KEY`` (bots' signing secrets, owners' webhook secrets).

Rotation, with no secret ever unreadable: put the new key first and keep the old one after it
(``ESCOBA_SECRETS_KEY=new,old``), restart, run this, then drop the old key and restart again.
"""

from django.core.management.base import BaseCommand, CommandError

from tournaments.models.encrypted import SecretUnreadable
from tournaments.services.secrets import secrets_rotate


class Command(BaseCommand):
    help = "Encrypt every stored secret again under the first key of ESCOBA_SECRETS_KEY."

    def handle(self, *args, **options):
        try:
            rewritten = secrets_rotate()
        except SecretUnreadable as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{rewritten} secrets encrypted under the first key.")
