# One image for web (gunicorn), worker and beat (Celery); docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app

COPY requirements/ requirements/
RUN pip install -r requirements/production.txt

COPY . .
# Static files (admin, Swagger UI) are collected and fingerprinted at build time; whitenoise
# serves them. The secret is a throwaway: collectstatic needs one, the running image gets its own.
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 1000 --home-dir /app escoba \
    && chown -R escoba /app/data

USER escoba
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000"]
