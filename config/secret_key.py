"""What production accepts as ``SECRET_KEY`` and ``ESCOBA_SECRETS_KEY``
(config/settings/production.py).

Django signs sessions, password-reset and e-mail verification links with ``SECRET_KEY``; bots'
signing secrets are encrypted with ``ESCOBA_SECRETS_KEY``. A key that anyone can read in this
repository, or a short one, would let a stranger forge the first or read the second.
"""

from django.core.exceptions import ImproperlyConfigured

# Keys published in this repository: never a production secret.
KNOWN_PLACEHOLDER_KEYS = frozenset(
    {
        "change-me-compose-only",
        "collectstatic-only",
        "local-only-insecure-key-never-use-in-production",
        "test-only-insecure-key",
    }
)
# Django's own check (security.W009) asks for 50 characters and 5 distinct ones.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_DISTINCT = 5
SECRET_KEY_PLACEHOLDER = (
    "SECRET_KEY is a placeholder published in this repository; set a random one."
)
SECRET_KEY_TOO_SHORT = (
    f"SECRET_KEY must be at least {SECRET_KEY_MIN_LENGTH} characters, "
    f"{SECRET_KEY_MIN_DISTINCT} of them distinct; generate one with "
    "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`."
)


def checked_secret_key(key: str) -> str:
    """``key`` if it may sign production sessions; a placeholder or a short key stops start-up."""
    if key in KNOWN_PLACEHOLDER_KEYS or key.startswith("django-insecure"):
        raise ImproperlyConfigured(SECRET_KEY_PLACEHOLDER)
    if len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_DISTINCT:
        raise ImproperlyConfigured(SECRET_KEY_TOO_SHORT)
    return key


# ESCOBA_SECRETS_KEY: the Fernet keys that encrypt bots' signing secrets and owners' webhook
# secrets in the database (tournaments/models/encrypted.py). Local runs and tests use this
# published key; production refuses it.
DEV_SECRETS_KEY = "-RU4jSX7md3S8QcMEdyNWq7RpujtWpOwgmRGziFiQD4="
SECRETS_KEY_PUBLISHED = (
    "ESCOBA_SECRETS_KEY holds the key published in this repository for local runs; "
    "generate one with `python manage.py secrets_key`."
)
SECRETS_KEY_MALFORMED = (
    "ESCOBA_SECRETS_KEY must be Fernet keys (32 bytes, url-safe base64, 44 characters), "
    "separated by commas; generate one with `python manage.py secrets_key`."
)


def checked_secrets_keys(keys: list[str]) -> list[str]:
    """``keys`` if every one is a Fernet key and none is published; else start-up stops."""
    import base64
    import binascii

    if not keys:
        raise ImproperlyConfigured("Set the environment variable ESCOBA_SECRETS_KEY.")
    for key in keys:
        if key == DEV_SECRETS_KEY:
            raise ImproperlyConfigured(SECRETS_KEY_PUBLISHED)
        try:
            raw = base64.urlsafe_b64decode(key.encode())
        except (binascii.Error, ValueError):
            raise ImproperlyConfigured(SECRETS_KEY_MALFORMED) from None
        if len(raw) != 32:
            raise ImproperlyConfigured(SECRETS_KEY_MALFORMED)
    return keys
