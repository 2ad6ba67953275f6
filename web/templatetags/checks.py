"""``{% check_progress bot as progress %}``: where the owner's check of ``bot`` has got to."""

from django import template

from tournaments.bot_check_progress import check_progress as read_progress

register = template.Library()


@register.simple_tag
def check_progress(bot) -> dict:
    return read_progress(bot)
