"""Settings for a developer's machine (``make run``): debug on, private bot URLs allowed."""

from config.env import env, env_bool, env_list
from config.secret_key import DEV_SECRETS_KEY

from .base import *  # noqa: F403

DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = env("SECRET_KEY", "local-only-insecure-key-never-use-in-production")
ESCOBA_SECRETS_KEYS = env_list("ESCOBA_SECRETS_KEY", default=[DEV_SECRETS_KEY])
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
ESCOBA_ALLOW_PRIVATE_BOT_URLS = env_bool("ESCOBA_ALLOW_PRIVATE_BOT_URLS", default=True)

# runserver serves static files through whitenoise straight from the app folders; only
# production collects them (STATIC_ROOT) for CompressedManifestStaticFilesStorage.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
