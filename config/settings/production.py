"""Production settings (compose and any real deployment): refuses to start with a weak secret.

A key that anyone can read in this repository (the local and test defaults, the compose file's old
placeholder, the image's build-time key) or a short one would let a stranger forge sessions,
password-reset links and e-mail verification links, so start-up stops instead.
"""

from config.env import env, env_bool, env_int, env_list
from config.secret_key import checked_secret_key, checked_secrets_keys

from .base import *  # noqa: F403
from .base import ESCOBA_TRUSTED_PROXIES

SECRET_KEY = checked_secret_key(env("SECRET_KEY"))
ESCOBA_SECRETS_KEYS = checked_secrets_keys(env_list("ESCOBA_SECRETS_KEY", default=[]))
DEBUG = env_bool("DEBUG", default=False)
ESCOBA_ALLOW_PRIVATE_BOT_URLS = env_bool("ESCOBA_ALLOW_PRIVATE_BOT_URLS", default=False)

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# X-Forwarded-Proto says "this came over HTTPS" only when a trusted proxy wrote it: with no proxy
# named (ESCOBA_TRUSTED_PROXIES 0) anyone reaching the server directly could claim HTTPS, so the
# header is ignored. X-Forwarded-For follows the same setting (base.py, NUM_PROXIES), and
# X-Forwarded-Host is never read (USE_X_FORWARDED_HOST stays off).
if ESCOBA_TRUSTED_PROXIES > 0:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
# The health check is probed over plain HTTP from inside the container network.
SECURE_REDIRECT_EXEMPT = [r"^api/health/$"]
SESSION_COOKIE_SECURE = SECURE_SSL_REDIRECT
CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_CONTENT_TYPE_NOSNIFF = True

# Owners' notifications go out through an SMTP server (Django's SMTP backend).
EMAIL_BACKEND = env("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=True)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", default=False)
