"""What production accepts as ``SECRET_KEY`` (config/settings/production.py).

Django signs sessions, password-reset and e-mail verification links with it: a key that anyone
can read in this repository, or a short one, would let a stranger forge them.
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
