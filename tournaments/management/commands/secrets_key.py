"""``python manage.py secrets_key``: print a new random key for ``ESCOBA_SECRETS_KEY``."""

from cryptography.fernet import Fernet
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Print a new Fernet key for ESCOBA_SECRETS_KEY (put it first to rotate)."

    def handle(self, *args, **options):
        self.stdout.write(Fernet.generate_key().decode())
