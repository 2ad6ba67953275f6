"""Settings shared by every environment.

Defaults here are the safe ones (production-like); ``local`` and ``test`` relax them. Every value
that differs between machines is read from the environment through ``config.env``.
"""

import sqlite3
from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env, env_bool, env_int, env_ints, env_list
from games.faults import DEFAULT_TIMEOUT_MS
from games.ratings.ranking import DEFAULT_POOL, DEFAULT_PROVISIONAL_HALF_WIDTH

BASE_DIR = Path(__file__).resolve().parents[2]
# Runtime files (SQLite database, admin credentials, logs, collected static files) live here.
DATA_DIR = Path(env("ESCOBA_DATA_DIR", str(BASE_DIR / "data")))

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", "")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=[])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", default=[])

# Bots on loopback or private addresses may register and be called (see games/addresses.py).
ESCOBA_ALLOW_PRIVATE_BOT_URLS = env_bool("ESCOBA_ALLOW_PRIVATE_BOT_URLS", default=False)

# The service's public address, for links we hand out (the game log link in a bot's end notice).
ESCOBA_PUBLIC_URL = env("ESCOBA_PUBLIC_URL", "http://127.0.0.1:8000")

# Bots: how registration and health checks treat them (tournaments/services/bots.py).
ESCOBA_BOT_VERIFY_TIMEOUT_MS = env_int("ESCOBA_BOT_VERIFY_TIMEOUT_MS", 3000)
ESCOBA_BOT_CHECK_TIMEOUT_MS = env_int("ESCOBA_BOT_CHECK_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
ESCOBA_BOT_UNHEALTHY_AFTER = env_int("ESCOBA_BOT_UNHEALTHY_AFTER", 3)
ESCOBA_MAX_BOTS_PER_OWNER = env_int("ESCOBA_MAX_BOTS_PER_OWNER", 20)
# Seconds between scheduled protocol checks of every active bot; 0 turns them off.
ESCOBA_BOT_CHECK_INTERVAL_S = env_int("ESCOBA_BOT_CHECK_INTERVAL_S", 0)

# Leagues and ratings (tournaments/services/league_*.py, matches.py, no_shows.py, rating_fits.py;
# docs/ratings.md).
# No-shows in a row (games a bot never showed up for) that take it out of rated play until a
# protocol check passes; and the 95 % interval half-width (Elo) under which a rating is
# established rather than provisional.
ESCOBA_NOSHOW_PAUSE_AFTER = env_int("ESCOBA_NOSHOW_PAUSE_AFTER", 3)
# After a no-show in rated play the ladder leaves the bot alone for this many seconds, doubled for
# each no-show of its run (a no-show while it waits grows no run); a bot paused for no-shows is
# checked again on its own after ESCOBA_RECHECK_FIRST_S, then 2x, 4x... up to ESCOBA_RECHECK_MAX_S.
ESCOBA_NOSHOW_BACKOFF_S = env_int("ESCOBA_NOSHOW_BACKOFF_S", 30)
ESCOBA_RECHECK_FIRST_S = env_int("ESCOBA_RECHECK_FIRST_S", 60)
ESCOBA_RECHECK_MAX_S = env_int("ESCOBA_RECHECK_MAX_S", 3600)
# The move timeout of rated play (the ladder's leagues); a user's league may enter another user's
# bot only with a move timeout at least this long.
ESCOBA_RATED_MOVE_TIMEOUT_MS = env_int("ESCOBA_RATED_MOVE_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
ESCOBA_PROVISIONAL_HALF_WIDTH = env_int(
    "ESCOBA_PROVISIONAL_HALF_WIDTH", int(DEFAULT_PROVISIONAL_HALF_WIDTH)
)
ESCOBA_MATCH_TIME_LIMIT_S = env_int("ESCOBA_MATCH_TIME_LIMIT_S", 300)
# The Celery limits of a match's task sit this far above that limit, which aborts slow games
# cleanly first (tournaments/queueing.py, play_match_limits).
ESCOBA_MATCH_TASK_SOFT_MARGIN_S = 30
ESCOBA_MATCH_TASK_HARD_MARGIN_S = 60
# The ladder (tournaments/services/ladder.py, docs/ladder.md): a matchmaker keeps this many rated
# duplicate sets in flight in each pool below (an empty list turns the ladder off), a bot in at
# most ESCOBA_LADDER_MAX_SETS_PER_BOT of them. Beat ticks every ESCOBA_LADDER_TICK_S seconds; a
# set that ends also refills its pool at once unless ESCOBA_LADDER_REFILL_ON_RESULT is off.
ESCOBA_LADDER_POOLS = env_list("ESCOBA_LADDER_POOLS", default=[DEFAULT_POOL])
ESCOBA_LADDER_SETS_IN_FLIGHT = env_int("ESCOBA_LADDER_SETS_IN_FLIGHT", 16)
ESCOBA_LADDER_MAX_SETS_PER_BOT = env_int("ESCOBA_LADDER_MAX_SETS_PER_BOT", 2)
ESCOBA_LADDER_TICK_S = env_int("ESCOBA_LADDER_TICK_S", 5)
ESCOBA_LADDER_REFILL_ON_RESULT = env_bool("ESCOBA_LADDER_REFILL_ON_RESULT", default=True)
# The scale (Elo) of the heavy-tailed distance between a bot and the opponent it is offered, and
# the window (seconds) over which "fewest recent sets" counts.
ESCOBA_LADDER_SPREAD = env_int("ESCOBA_LADDER_SPREAD", 100)
ESCOBA_LADDER_RECENT_S = env_int("ESCOBA_LADDER_RECENT_S", 3600)
# The baseline correction of rated sets (docs/ratings.md): random plays per rated deal (beside
# one greedy and one expert play), and the length in days of the period for which a pool's
# coefficients are frozen.
ESCOBA_BASELINE_PLAYS = env_int("ESCOBA_BASELINE_PLAYS", 16)
ESCOBA_BASELINE_PERIOD_DAYS = env_int("ESCOBA_BASELINE_PERIOD_DAYS", 7)
# A pool's latest rated deals, valued before a period, whose mean swing is frozen with the
# period's coefficients: the mean the correction's even terms are less of (fewer: no even terms).
ESCOBA_BASELINE_MEAN_DEALS = env_int("ESCOBA_BASELINE_MEAN_DEALS", 4000)
# Challenges and version tests (unrated, on demand): per user per 24 hours; a test keeps this
# many sets in flight and plays at most ESCOBA_TEST_MAX_SETS.
ESCOBA_CHALLENGES_PER_DAY = env_int("ESCOBA_CHALLENGES_PER_DAY", 20)
ESCOBA_TESTS_PER_DAY = env_int("ESCOBA_TESTS_PER_DAY", 5)
ESCOBA_TEST_SETS_IN_FLIGHT = env_int("ESCOBA_TEST_SETS_IN_FLIGHT", 4)
ESCOBA_TEST_MAX_SETS = env_int("ESCOBA_TEST_MAX_SETS", 2000)
# Quotas of users' own leagues (tournaments/services/quotas.py, docs/security.md "Quotas"); staff
# and the arena's own accounts are exempt. Past a size limit the answer is a 400, past a count
# of what is running or queued a 429. A league starts in the background, its schedule written
# ESCOBA_SCHEDULE_BATCH_MATCHES matches at a time.
ESCOBA_LEAGUE_MAX_BOTS = env_int("ESCOBA_LEAGUE_MAX_BOTS", 16)
ESCOBA_LEAGUE_MAX_GAMES = env_int("ESCOBA_LEAGUE_MAX_GAMES", 1000)
ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING = env_int("ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING", 20)
ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS = env_int("ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS", 5000)
ESCOBA_RUNNING_LEAGUES_PER_USER = env_int("ESCOBA_RUNNING_LEAGUES_PER_USER", 3)
ESCOBA_QUEUED_GAMES_PER_USER = env_int("ESCOBA_QUEUED_GAMES_PER_USER", 2000)
ESCOBA_SCHEDULE_BATCH_MATCHES = env_int("ESCOBA_SCHEDULE_BATCH_MATCHES", 200)

# A person's games (tournaments/services/play.py): how many one person may have in play at
# once, the seconds a person has for each move (then the fault policy's fallback is played for
# them), and the bots' move timeout in those games.
ESCOBA_PLAY_MAX_GAMES = env_int("ESCOBA_PLAY_MAX_GAMES", 3)
ESCOBA_PLAY_CLOCK_S = env_int("ESCOBA_PLAY_CLOCK_S", 120)
ESCOBA_PLAY_BOT_TIMEOUT_MS = env_int("ESCOBA_PLAY_BOT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
# Seconds, beyond three of those bot timeouts, after which a bots' turn with no answer stored
# is sent to the games queue again (its worker died while calling the bot).
ESCOBA_PLAY_STALL_S = env_int("ESCOBA_PLAY_STALL_S", 5)
# People's games whose referee each process keeps between steps (tournaments/services/
# play_referee.py), so a step judges only the answers new to it; 0: every step replays the game.
ESCOBA_PLAY_REFEREE_CACHE = env_int("ESCOBA_PLAY_REFEREE_CACHE", 256)
# Seconds between sweeps that re-send the matches of running leagues gone quiet (a Redis that
# lost its queue); 0 turns them off.
ESCOBA_SWEEP_INTERVAL_S = env_int("ESCOBA_SWEEP_INTERVAL_S", 60)

# Live games and pages over Server-Sent Events (tournaments/live_feed.py, web/sse.py): how long a
# game's live entries stay in Redis after its last one, how many streams one web process keeps
# open at most (the next gets a 503), the seconds between keep-alive comments, and how long one
# stream lasts before the browser is asked to reconnect (it resumes where it was). The streams
# of one process read the database from ESCOBA_LIVE_DB_THREADS threads, so they hold that many
# database connections at most, however many are open.
ESCOBA_LIVE_TTL_S = env_int("ESCOBA_LIVE_TTL_S", 3600)
# The games worker's garbage collector (config/celery_app.py): collect the youngest generation
# after this many new container objects, the next one after this many of those collections, the
# oldest after this many of the next one's (CPython's own: 700, 10, 10).
ESCOBA_WORKER_GC_THRESHOLD = env_ints("ESCOBA_WORKER_GC_THRESHOLD", (10_000, 100, 10))
ESCOBA_LIVE_MAX_STREAMS = env_int("ESCOBA_LIVE_MAX_STREAMS", 200)
# Of those, how many one client address may hold (its next gets a 429).
ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT = env_int("ESCOBA_LIVE_MAX_STREAMS_PER_CLIENT", 8)
ESCOBA_LIVE_HEARTBEAT_S = env_int("ESCOBA_LIVE_HEARTBEAT_S", 15)
ESCOBA_LIVE_STREAM_MAX_S = env_int("ESCOBA_LIVE_STREAM_MAX_S", 1800)
ESCOBA_LIVE_DB_THREADS = env_int("ESCOBA_LIVE_DB_THREADS", 4)

# Who may read /metrics (tournaments/metrics.py): clients in these networks (CIDRs; the address
# as the throttles see it, after ESCOBA_TRUSTED_PROXIES), or anyone sending
# "Authorization: Bearer <ESCOBA_METRICS_TOKEN>" (empty: no token opens it).
ESCOBA_METRICS_NETWORKS = env_list("ESCOBA_METRICS_NETWORKS", ["127.0.0.0/8", "::1/128"])
ESCOBA_METRICS_TOKEN = env("ESCOBA_METRICS_TOKEN", "")
for _cidr in ESCOBA_METRICS_NETWORKS:
    try:
        ip_network(_cidr, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"ESCOBA_METRICS_NETWORKS: {_cidr!r} is not a network (10.0.0.0/8, ::1/128)."
        ) from None
# The health check (tournaments/api/health.py) answers from its last look for this many seconds,
# so a flood of probes costs one database, Redis and worker ping per process per period.
ESCOBA_HEALTH_CACHE_S = env_int("ESCOBA_HEALTH_CACHE_S", 5)

# Owners' notifications (tournaments/services/notifications.py). Mail is printed to the
# console unless EMAIL_BACKEND says otherwise (production sends through SMTP).
EMAIL_BACKEND = env("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Escoba Arena <noreply@localhost>")
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
ESCOBA_NOTIFY_WEBHOOK_TIMEOUT_MS = env_int("ESCOBA_NOTIFY_WEBHOOK_TIMEOUT_MS", 5000)
# How long the link that confirms an owner's e-mail address works (seconds); nothing but that
# link is mailed to an address until it is confirmed (tournaments/services/email_verification.py).
ESCOBA_EMAIL_VERIFY_MAX_AGE_S = env_int("ESCOBA_EMAIL_VERIFY_MAX_AGE_S", 3 * 24 * 3600)
# A webhook that failed every retry of this many notifications in a row is no longer called.
ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER = env_int("ESCOBA_NOTIFY_WEBHOOK_SUSPEND_AFTER", 5)
# The first retry of a failed delivery waits this long; each next one twice as long.
ESCOBA_NOTIFY_RETRY_BASE_MS = env_int("ESCOBA_NOTIFY_RETRY_BASE_MS", 30_000)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens stored as SHA-512 digests, with an expiry (django-rest-knox).
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "tournaments",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "tournaments.api.errors.api_not_found_middleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
    # The long row lists of the browser pages (web/jinja2/): Django's templates include them
    # through ``{% rows %}`` (web/templatetags/rows.py). Jinja2 compiles a template to Python, so
    # a row costs a fraction of what Django's engine spends on its variables, tags and filters.
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"environment": "web.jinja.environment"},
    },
]

# Database: DATABASE_URL (PostgreSQL in production and compose), else a SQLite file in DATA_DIR.
DATABASE_URL = env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
# Under ASGI each request's code runs in a thread of its own, and Django's connections belong to
# threads: kept connections (CONN_MAX_AGE) are never reused there, and every request opened a
# new PostgreSQL session. The ASGI entry point (config/asgi.py) turns on Django's pool for the
# web process instead; WSGI servers and the workers keep their connections as above. A request
# that finds all ESCOBA_DB_POOL_MAX connections busy waits for one, 10 s at most.
if (
    env_bool("ESCOBA_DB_POOL", False)
    and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 2,
        "max_size": env_int("ESCOBA_DB_POOL_MAX", 10),
        "timeout": 10,
    }
# PostgreSQL plans every statement it is sent. With the parameters bound on the client (Django's
# default) each statement is new text, planned anew: for the pages' joins, planning cost more
# of PostgreSQL's CPU than running them. Bound on the server, psycopg prepares a statement a
# connection has run 5 times, and PostgreSQL then keeps its plan (docs/benchmarks.md, "API
# under load"). Behind a PgBouncer in transaction pooling that does not track prepared
# statements, set it to 0 (docs/scaling.md).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "ESCOBA_DB_SERVER_BINDING", True
):
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Storing a result is one ``UPDATE ... RETURNING`` (services/game_results.py), which SQLite
    # has from 3.35; Python uses the system's SQLite, older on some distributions.
    if sqlite3.sqlite_version_info < (3, 35):
        raise ImproperlyConfigured(
            f"This Python uses SQLite {sqlite3.sqlite_version}; the arena needs 3.35 or later. "
            "Use a Python built with a newer SQLite, or PostgreSQL (DATABASE_URL)."
        )
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Web, worker and beat write to the same file: wait for locks instead of failing at once,
    # and take the write lock when a transaction starts so two writers never deadlock. In WAL
    # mode readers never wait for a writer, and a commit appends to the log without syncing the
    # disk (a power cut may lose the last commits, never the file): with the default rollback
    # journal every commit synced the disk twice, and storing a league's games cost the worker a
    # third more CPU (docs/benchmarks.md, "Leagues").
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis is both the Celery broker/result store and the cache (throttling counters live there).
REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
# Seconds any Redis client (cache, broker, result store) waits to connect or for an answer: while
# Redis is unreachable a request must get its answer (throttles fail open, league start 503)
# quickly rather than hang (docs/scaling.md).
REDIS_CONNECT_TIMEOUT_S = 2
REDIS_SOCKET_TIMEOUT_S = 5
CACHES = {
    "default": {
        "BACKEND": "config.redis_cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "escoba",
        "OPTIONS": {
            "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S,
            "socket_timeout": REDIS_SOCKET_TIMEOUT_S,
        },
    }
}
# Anonymous public reads are cached this long at most (tournaments/read_cache.py: results and
# fits invalidate them at once; this bounds staleness if an invalidation is lost). 0: no cache.
ESCOBA_READ_CACHE_S = env_int("ESCOBA_READ_CACHE_S", 300)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
}

# Fernet keys (comma-separated, url-safe base64) that encrypt bots' signing secrets and owners'
# webhook secrets in the database (tournaments/models/encrypted.py): the first encrypts, every
# one decrypts. To rotate: put a new key first, run `manage.py secrets_rotate`, then drop the
# old one (docs/security.md). Local and test settings fall back on a published key; production
# requires its own.
ESCOBA_SECRETS_KEYS = env_list("ESCOBA_SECRETS_KEY", default=[])

# Reverse proxies in front of the web server that we trust to write X-Forwarded-For (and, in
# production, X-Forwarded-Proto); 0: those headers are ignored, anyone can write them. Every
# per-address limit (the API's throttles, the web forms', live streams) reads the client address
# through tournaments.api.throttling.client_address, which follows this.
ESCOBA_TRUSTED_PROXIES = env_int("ESCOBA_TRUSTED_PROXIES", 0)

# API tokens (django-rest-knox; tournaments/services/accounts.py): stored as SHA-512 digests,
# never in clear; each lasts ESCOBA_API_TOKEN_TTL_DAYS days from when it was given out, and an
# account keeps at most ESCOBA_API_TOKENS_PER_USER of them (asking for another drops the oldest).
# Sent as `Authorization: Token <token>`.
ESCOBA_API_TOKEN_TTL_DAYS = env_int("ESCOBA_API_TOKEN_TTL_DAYS", 90)
ESCOBA_API_TOKENS_PER_USER = env_int("ESCOBA_API_TOKENS_PER_USER", 10)
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=ESCOBA_API_TOKEN_TTL_DAYS),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}

# Django REST framework: token auth for bots' owners and scripts, session auth for the browsable
# API and pages; every list paginated; anonymous and authentication endpoints throttled.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tournaments.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    # JSON through orjson with a nesting limit (tournaments/api/parsers.py); forms for the
    # browsable API.
    "DEFAULT_PARSER_CLASSES": [
        "tournaments.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": [
        "tournaments.api.throttling.AnonRateThrottle",
        "tournaments.api.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("ESCOBA_THROTTLE_ANON", "120/minute"),
        "user": env("ESCOBA_THROTTLE_USER", "600/minute"),
        "auth": env("ESCOBA_THROTTLE_AUTH", "10/minute"),
        "bot_calls": env("ESCOBA_THROTTLE_BOT_CALLS", "30/minute"),
        # Accounts made from one address (API and web sign-up), and health checks per address.
        "signup": env("ESCOBA_THROTTLE_SIGNUP", "10/hour"),
        "health": env("ESCOBA_THROTTLE_HEALTH", "60/minute"),
        # Settings changes that give an e-mail address (each mails a confirmation link), per user.
        "verify_email": env("ESCOBA_THROTTLE_VERIFY_EMAIL", "5/hour"),
    },
    "EXCEPTION_HANDLER": "tournaments.api.errors.exception_handler",
    # Throttles count per client address: REMOTE_ADDR, or with N trusted reverse proxies in
    # front, the address the N-th proxy from us saw (in X-Forwarded-For). With 0, the default,
    # X-Forwarded-For is ignored: anyone can write it.
    "NUM_PROXIES": ESCOBA_TRUSTED_PROXIES,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Escoba Arena API",
    "DESCRIPTION": (
        "Register bots that play Escoba over HTTP, run leagues and read rankings. Errors share "
        'one body: {"detail": str, "code": str, "errors": {field: [messages]}}.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from our own static files (drf-spectacular-sidecar), never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "BotStatusEnum": "tournaments.models.bots.Bot.Status",
        "BotHealthEnum": "tournaments.models.bots.Bot.Health",
        "LeagueStatusEnum": "tournaments.models.leagues.League.Status",
        "MatchStatusEnum": "tournaments.models.leagues.Match.Status",
        "GameStatusEnum": "tournaments.models.leagues.Game.Status",
        "NotificationDeliveryEnum": "tournaments.models.notifications.Notification.Delivery",
    },
}

# Celery (config/celery_app.py reads every CELERY_* name below). The match queues (games,
# leagues, challenges: playing matches, and the recovery and sweep that re-send them) and
# maintenance (protocol checks, the ladder, rating fits, scheduling, anything not routed), each
# with its own workers, so a flood of checks never delays a game. A worker started without -Q
# consumes them all. Tasks are sent only through tournaments/queueing.py, which names them.
CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport with a fix that keeps workers alive when Redis dies under them
# (config/redis_transport.py says what and why).
CELERY_BROKER_TRANSPORT = "config.redis_transport:Transport"
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TIMEZONE = TIME_ZONE
CELERY_IMPORTS = ["tournaments.diagnostics"]
# A match goes to the queue of its league's kind (tournaments/queueing.py, MATCH_QUEUES): games
# (the ladder), leagues (users' leagues), challenges (challenges and version tests). A worker
# consuming several queues polls them in turn, so none starves the others (docs/scaling.md).
# baselines: the luck correction's values of rated deals (docs/ratings.md).
CELERY_TASK_QUEUES = [
    Queue("games"),
    Queue("leagues"),
    Queue("challenges"),
    Queue("maintenance"),
    Queue("baselines"),
]
CELERY_TASK_DEFAULT_QUEUE = "maintenance"
CELERY_TASK_ROUTES = {
    "leagues.play_match": {"queue": "games"},
    "leagues.schedule": {"queue": "maintenance"},
    "leagues.recover_matches": {"queue": "games"},
    "leagues.sweep": {"queue": "games"},
    "play.*": {"queue": "games"},
    "ladder.*": {"queue": "maintenance"},
    "bots.*": {"queue": "maintenance"},
    "ratings.*": {"queue": "maintenance"},
    # The baseline values of rated deals (services.baselines): CPU, never ahead of a game.
    "baselines.*": {"queue": "baselines"},
    # Owners' notifications: a flood of them never delays a game.
    "notifications.*": {"queue": "maintenance"},
}
# Limits of every task that sets none of its own; the soft limit raises SoftTimeLimitExceeded
# inside the task so it can record a clean failure first. leagues.play_match has its own, just
# above ESCOBA_MATCH_TIME_LIMIT_S (tournaments/queueing.py, play_match_limits).
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 5 * 60)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 60)
# The longest task: the default, or a match's.
LONGEST_TASK_S = max(
    CELERY_TASK_TIME_LIMIT, ESCOBA_MATCH_TIME_LIMIT_S + ESCOBA_MATCH_TASK_HARD_MARGIN_S
)
# Idempotent tasks opt in with @shared_task(acks_late=True): their message is then acknowledged
# only after they finish, and requeued if the worker process dies mid-task.
CELERY_TASK_ACKS_LATE = False
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis re-delivers an unacknowledged message after this many seconds; it must exceed the
# longest task or an acks_late task would run twice while the first run is still going.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": LONGEST_TASK_S + 10 * 60,
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S,
}
# Sending a task while Redis is down fails within a few seconds, not after the result store's
# default 20 retries (19 s): a web request must not hang on it.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "retry_policy": {
        "max_retries": 2,
        "interval_start": 0,
        "interval_step": 0.5,
        "interval_max": 1,
    },  # fmt: skip
}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_CONNECT_TIMEOUT_S
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_CONNECT_TIMEOUT_S
CELERY_TASK_PUBLISH_RETRY_POLICY = CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS["retry_policy"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_TRACK_STARTED = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict = {}
if ESCOBA_LADDER_POOLS and ESCOBA_LADDER_TICK_S > 0:
    CELERY_BEAT_SCHEDULE["ladder-tick"] = {
        "task": "ladder.tick",
        "schedule": ESCOBA_LADDER_TICK_S,
        # A tick not run within its interval is replaced by the next one, never piled up.
        "options": {"expires": ESCOBA_LADDER_TICK_S},
    }
if ESCOBA_SWEEP_INTERVAL_S > 0:
    CELERY_BEAT_SCHEDULE["leagues-sweep"] = {
        "task": "leagues.sweep",
        "schedule": ESCOBA_SWEEP_INTERVAL_S,
    }
    CELERY_BEAT_SCHEDULE["ratings-sweep"] = {
        "task": "ratings.sweep",
        "schedule": ESCOBA_SWEEP_INTERVAL_S,
    }
    CELERY_BEAT_SCHEDULE["baselines-sweep"] = {
        "task": "baselines.sweep",
        "schedule": ESCOBA_SWEEP_INTERVAL_S,
    }
if ESCOBA_PLAY_CLOCK_S > 0:
    # A person's move clock runs out even when nobody reads the game (services/play.py).
    CELERY_BEAT_SCHEDULE["play-clocks"] = {
        "task": "play.clocks",
        "schedule": min(ESCOBA_PLAY_CLOCK_S, 10),
        "options": {"expires": min(ESCOBA_PLAY_CLOCK_S, 10)},
    }
if ESCOBA_BOT_CHECK_INTERVAL_S > 0:
    CELERY_BEAT_SCHEDULE["bots-check"] = {
        "task": "bots.check_due",
        "schedule": ESCOBA_BOT_CHECK_INTERVAL_S,
    }
