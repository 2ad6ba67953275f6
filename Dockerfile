# One image for web (uvicorn, serving config/asgi.py), worker and beat (Celery); docker-compose.yml
# picks the command, and its web runs the default one below.

# The rules engine compiled with Cython ("Two builds, one source" in docs/architecture.md): made
# in an image that has a C compiler and Python's headers, with the Cython that make engine-build
# uses (requirements/local.txt), then copied into the slim image, which has neither. The same
# Python 3.11 on the same Debian, so the same ABI.
FROM python:3.11 AS engine
WORKDIR /app
COPY requirements/local.txt requirements/local.txt
RUN pip install --no-cache-dir "$(grep -i '^cython==' requirements/local.txt)"
COPY games/ games/
COPY scripts/__init__.py scripts/engine_build.py scripts/
RUN python -m scripts.engine_build

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app

COPY requirements/ requirements/
RUN pip install -r requirements/production.txt

COPY . .
# The engine checks a build's stamp against its sources at import: the second command fails the
# image if the worker would referee with the pure-Python engine.
COPY --from=engine /app/games/engine/_compiled/ games/engine/_compiled/
RUN python -m games info && ESCOBA_ENGINE=compiled python -c "import games.engine"
# Static files (admin, Swagger UI) are collected and fingerprinted at build time; whitenoise
# serves them. The keys are throwaways made here: collectstatic needs them, the running image
# gets its own.
RUN SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
    ESCOBA_SECRETS_KEY="$(python -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())')" \
    python manage.py collectstatic --noinput \
    && useradd --system --uid 1000 --home-dir /app escoba \
    && chown -R escoba /app/data && chmod 700 /app/data

USER escoba
EXPOSE 8000
# The whole site under ASGI: the live streams need it (docs/architecture.md, "Why uvicorn").
CMD ["uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "3", "--timeout-graceful-shutdown", "10", "--no-access-log", "--no-proxy-headers", "--loop", "asyncio"]
