from django.apps import AppConfig


class WebConfig(AppConfig):
    """The browser pages: views, forms, templates, static files and template tags, no models.

    It reads through the selectors of ``tournaments`` and writes through its services.
    """

    name = "web"
    verbose_name = "Web pages"
