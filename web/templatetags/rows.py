"""``{% rows "web/rows/NAME.html" key=value ... %}``: a page's row list rendered by Jinja2.

See web/jinja.py for why. The rows see only the values passed, not the page's context.
"""

from typing import Any

from django import template
from django.template import engines
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.simple_tag
def rows(template_name: str, **values: Any) -> SafeString:
    """The Jinja2 template ``template_name`` (web/jinja2/) rendered with ``values``: escaped by
    Jinja2's autoescaping, so safe to insert as it is."""
    return mark_safe(engines["jinja2"].get_template(template_name).render(values))  # noqa: S308
