"""``python manage.py bots_register_examples URL...``: register bots that are already running.

It starts nothing: serve the SDK's example bots first (``python -m bots_sdk serve
bots_sdk.examples.greedy:choose --port 8101 --name greedy``), then point this command at them.
Each bot is registered under the name its ``GET U`` announces, owned by ``--owner``; a bot of that
owner and name that already exists is moved to the new URL instead (ports change between runs).
"""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tournaments.bot_calls.caller import check_bot_info
from tournaments.models import Bot
from tournaments.services.bots import bot_register, bot_update
from tournaments.services.league_creation import system_user


class Command(BaseCommand):
    help = "Register running bots (e.g. the SDK's example bots) under the names they announce."

    def add_arguments(self, parser):
        parser.add_argument("urls", nargs="+", metavar="URL", help="Base URL of a running bot.")
        parser.add_argument("--owner", default="examples", help="Owner account (made if absent).")

    def handle(self, *args, urls: list[str], owner: str, **options):
        from django.conf import settings

        user = system_user(owner)
        for url in urls:
            info = check_bot_info(url, None, allow_private=settings.ESCOBA_ALLOW_PRIVATE_BOT_URLS)
            if not info.ok or info.info is None:
                raise CommandError(f"{url}: {info.reason}")
            name = info.info.name
            try:
                existing = Bot.objects.filter(owner=user, name__iexact=name).first()
                if existing is None:
                    bot = bot_register(owner=user, name=name, url=url)
                    verb = "registered"
                elif existing.url != url:
                    bot = bot_update(bot=existing, url=url)
                    verb = "moved"
                else:
                    bot, verb = existing, "already registered"
            except ValidationError as error:
                raise CommandError(f"{url} ({name}): {'; '.join(error.messages)}") from None
            self.stdout.write(f"{verb} {bot.name} (id {bot.id}) at {url}")
