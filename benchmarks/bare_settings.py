"""A bare Django, the floor the benchmarks' second ratios are taken against: no DRF, no
middleware, no authentication, no logging of requests; Django's defaults but for the app's own
database and django-redis cache settings (persistent connections, as any production Django
keeps them; no health check, Django's default). Served by sync gunicorn workers
(`common.bare_django_command`), views in `bare_urls.py`."""

from interviewprep import settings as app

SECRET_KEY = app.SECRET_KEY
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
# The token model only because the attempts app connects its cache evictions to it at start, and
# evaluation because the attempts app registers its job handlers with it at start (after it, as
# in the app); evaluation reads the app's configuration as it starts.
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "rest_framework.authtoken",
    "attempts",
    "evaluation",
]
CONFIG = app.CONFIG
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "benchmarks.bare_urls"
DATABASES = {"default": {**app.DATABASES["default"], "CONN_HEALTH_CHECKS": False}}
CACHES = app.CACHES
DEFAULT_AUTO_FIELD = app.DEFAULT_AUTO_FIELD
USE_TZ = True
