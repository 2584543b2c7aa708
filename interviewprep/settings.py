"""Django settings. Every value comes from `interviewprep.config`, read once from the environment."""

from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF

from interviewprep.config import load_or_exit

CONFIG = load_or_exit()

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = CONFIG.secret_key
DEBUG = CONFIG.debug
ALLOWED_HOSTS = CONFIG.allowed_hosts

# Production mode: HTTPS only, cookies never sent in clear, browsers told to remember it for a year.
PRODUCTION = CONFIG.production
# Behind a proxy we run, which terminates TLS and sets X-Forwarded-Proto and X-Forwarded-For:
# only then are those headers believed, X-Forwarded-For only from a peer in TRUSTED_PROXIES
# (interviewprep/client.py).
BEHIND_PROXY = CONFIG.behind_proxy
TRUSTED_PROXIES = CONFIG.trusted_proxies
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
SECURE_SSL_REDIRECT = PRODUCTION
# The supervisor's health check and the host's scraper ask over plain HTTP on the loopback.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = 365 * 24 * 3600 if PRODUCTION else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = PRODUCTION
SECURE_HSTS_PRELOAD = PRODUCTION and CONFIG.hsts_preload
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION
# Preload binds every subdomain for months and is the operator's choice (HSTS_PRELOAD);
# until it is made, check --deploy's reminder of it is not a fault.
SILENCED_SYSTEM_CHECKS = ["security.W021"] if PRODUCTION and not CONFIG.hsts_preload else []
# One policy everywhere, dev and production, with no inline script or style and no eval: an
# injected tag or attribute cannot run or restyle a page. Every page passes it without a nonce
# (tests/browser/test_csp.py); data: images are the icons Swagger UI's stylesheet embeds.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Full-text search over the question bank.
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # Its system checks catch a policy written in the pre-4.0 settings format.
    "csp",
    "django_celery_beat",
    "axes",
    "interviewprep.apps.InterviewPrepConfig",
    "attempts",
    "evaluation",
]

MIDDLEWARE = [
    "interviewprep.middleware.RequestIdMiddleware",
    # Before anything reads the body or the session: a refused body costs nothing more.
    "interviewprep.middleware.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Above the static files too: an SVG opened on its own is a document the policy should bind.
    "csp.middleware.CSPMiddleware",
    "interviewprep.middleware.StaticFilesMiddleware",
    # The session, its user and messages, which a token API request goes past
    # (interviewprep.middleware.token_api_request).
    "interviewprep.middleware.PageSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Django's own, named so (`check --deploy` looks for it by this path). It checks no token
    # API request: DRF's views are exempt, and DRF checks CSRF for the session's user only.
    "django.middleware.csrf.CsrfViewMiddleware",
    "interviewprep.middleware.PageAuthenticationMiddleware",
    "attempts.middleware.TimeZoneMiddleware",
    "interviewprep.middleware.PageMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as axes asks: it turns a login it refused into our 429 (AXES_LOCKOUT_CALLABLE).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "interviewprep.urls"
WSGI_APPLICATION = "interviewprep.wsgi.application"
# What the Procfile's `web` line serves (gunicorn with uvicorn workers).
ASGI_APPLICATION = "interviewprep.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # Blind mode and the time zone of the candidate's preferences, read by the pages.
                "attempts.context_processors.preferences",
            ],
        },
    },
]

DATABASES = {"default": CONFIG.database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The cache is a read accelerator only: short timeouts and failures swallowed for reads (the
# database answers instead). It lives on its own Redis database, apart from the broker and the
# locks; eviction is per server, so the server must not evict (docs/operations.md).
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": CONFIG.redis_url,
        "KEY_PREFIX": "ip",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_TIMEOUT": 0.25,
            "SOCKET_CONNECT_TIMEOUT": 0.25,
            "IGNORE_EXCEPTIONS": True,
            # redis-py 8 caps a pool at 100 connections and fails the next call: not for a cache.
            "CONNECTION_POOL_KWARGS": {"health_check_interval": 15, "max_connections": 10_000},
        },
    }
}
DJANGO_REDIS_IGNORE_EXCEPTIONS = True
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
DJANGO_REDIS_LOGGER = "interviewprep.cache"
REDIS_STATE_URL = CONFIG.state_redis_url

SESSION_ENGINE = "django.contrib.sessions.backends.db"
# Axes first: it refuses a locked-out login before any password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "attempts.auth_backends.UsernameAnyCaseBackend"]

# Failed logins, counted in PostgreSQL per username and per client address (attempts/login_attempts.py).
AXES_HANDLER = "attempts.login_attempts.LoginAttemptsHandler"
# A username from one address, and (at LOGIN_ADDRESS_FAILURE_LIMIT) an address alone: one user's
# guesses never lock out the others behind the same office address.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_FAILURE_LIMIT = CONFIG.login_failure_limit
AXES_COOLOFF_TIME = timedelta(seconds=CONFIG.login_cooloff_seconds)
AXES_USERNAME_CALLABLE = "attempts.login_attempts.login_username_key"
AXES_CLIENT_IP_CALLABLE = "interviewprep.client.client_address"
AXES_LOCKOUT_CALLABLE = "attempts.views_auth.login_locked_out_response"
AXES_RESET_ON_SUCCESS = True
# Tries during a lock-out are refused uncounted, so the Retry-After a client was given stays true.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Successful logins need no table of their own (and logging one would make the token endpoint open a session).
AXES_DISABLE_ACCESS_LOG = True
# No version banner in the log of every process that starts Django.
AXES_VERBOSE = False
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where `collectstatic` (the deploy's release step) copies the files for the proxy to serve.
STATIC_ROOT = CONFIG.static_root
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # The editor's files the attempt page loads, as npm installed them (package.json): served
    # from here, never from a CDN. Its stylesheets are linked by the page: in strict CSP mode Ace
    # injects no <style> of its own.
    "attempts.editor_files.EditorFilesFinder",
]
# Serve finders directly so `make run` needs no collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Every request body, on every endpoint (interviewprep/body_limit.py): four answers' worth.
REQUEST_BODY_MAX_BYTES = 256 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_BODY_MAX_BYTES
ANSWER_MAX_BYTES = 64 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "attempts.authentication.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "interviewprep.api.Pagination",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["interviewprep.parsers.BoundedJSONParser"],
    "EXCEPTION_HANDLER": "interviewprep.api.problem_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "interviewprep.schema.ProblemAutoSchema",
    "DEFAULT_THROTTLE_RATES": {"submit": CONFIG.submit_rate, "run": CONFIG.run_rate, "register": CONFIG.register_rate},
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
# A deleted token authenticates at most this long after its deletion commits, however it was
# deleted (attempts/authentication.py); deleted through Django, not at all.
AUTH_TOKEN_CACHE_SECONDS = 10
SPECTACULAR_SETTINGS = {
    "TITLE": "InterviewPrep API",
    "DESCRIPTION": "Practice questions, attempts, idempotent submissions and their evaluation.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge from validator.swagger.io: it would send the schema's URL out and break the CSP.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    # Request and response components apart: a request's non-blank strings say minLength 1.
    "COMPONENT_SPLIT_REQUEST": True,
    # Several `status` fields with different choices: each set named, so clients get stable names.
    # Runs and practice requests share one set of states.
    "ENUM_NAME_OVERRIDES": {
        "AttemptStatusEnum": "attempts.models.AttemptStatus",
        "SubmissionStatusEnum": "attempts.models.SubmissionStatus",
        "WorkStatusEnum": "attempts.models.RunStatus",
        "LanguageEnum": "attempts.api_schema.LANGUAGE_IDS",
        "KindEnum": "attempts.models.QuestionKind",
    },
}

# Celery: the traps of this stack (docs/architecture.md), each handled here.
CELERY_BROKER_URL = CONFIG.broker_url
# A Redis broker's failed ack must not hold its prefetch slot for good (interviewprep/broker.py).
CELERY_BROKER_TRANSPORT = "interviewprep.broker:Transport" if CONFIG.broker_is_redis else None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = CONFIG.job_time_limit
CELERY_TASK_SOFT_TIME_LIMIT = max(1, CONFIG.job_time_limit - 5)
CELERY_TASK_DEFAULT_QUEUE = "evaluate"
CELERY_TASK_CREATE_MISSING_QUEUES = True
# Jobs are published to their handler's queue by the outbox; periodic tasks name theirs.
CELERY_TASK_ROUTES = {"attempts.tasks.*": {"queue": "ops"}}
# Messages unacknowledged past the visibility timeout are delivered again: keep it far above the
# hard time limit (no countdowns or ETAs are ever published: retries wait in the outbox).
_VISIBILITY_TIMEOUT = max(3600, CONFIG.job_time_limit * 10)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _VISIBILITY_TIMEOUT,
    "socket_timeout": 2.0,
    "socket_connect_timeout": 2.0,
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# RabbitMQ (interviewprep/rabbitmq.py): every publish is confirmed, so one the broker never took
# fails instead of vanishing; the queues are declared by the evaluation app from its registry.
if CONFIG.broker_is_amqp:
    CELERY_BROKER_TRANSPORT_OPTIONS["confirm_publish"] = True
    # A queue name no app registered fails loudly rather than being declared unlike the others.
    CELERY_TASK_CREATE_MISSING_QUEUES = False
    CELERY_TASK_DEFAULT_EXCHANGE = "interviewprep"
    CELERY_TASK_DEFAULT_EXCHANGE_TYPE = "topic"
    CELERY_TASK_DEFAULT_ROUTING_KEY = CELERY_TASK_DEFAULT_QUEUE
# Per-consumer QoS on quorum queues (they have no global QoS): Celery's default, said here.
CELERY_WORKER_DETECT_QUORUM_QUEUES = True
# What every task publish passes (the relay's, beat's): the write and the confirm each wait at
# most this long, so a broker under an alarm fails the publish instead of hanging it.
BROKER_PUBLISH_OPTIONS = (
    {"timeout": CONFIG.broker_confirm_timeout, "confirm_timeout": CONFIG.broker_confirm_timeout}
    if CONFIG.broker_is_amqp
    else {}
)
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_PUBLISH_RETRY = True
# One retry, on a fresh connection (a pooled one the broker dropped while idle), for every
# publisher: two confirm timeouts bound a publish to a blocked RabbitMQ.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# The purges (docs/operations.md, "Housekeeping"): hourly, so each run has an hour's rows to
# delete, in the purge helper's short batches; retention per kind is a setting.
CELERY_BEAT_SCHEDULE = {
    "purge-idempotency-keys": {
        "task": "attempts.tasks.purge_idempotency_keys",
        "schedule": 3600.0,
        "options": {"queue": "ops", "expires": 3600},
    },
    "purge-runs": {
        "task": "attempts.tasks.purge_runs",
        "schedule": 3600.0,
        "options": {"queue": "ops", "expires": 3600},
    },
    "purge-state-changes": {
        "task": "attempts.tasks.purge_state_changes",
        "schedule": 3600.0,
        "options": {"queue": "ops", "expires": 3600},
    },
    "purge-job-tries": {
        "task": "evaluation.tasks.purge_job_tries",
        "schedule": 3600.0,
        "options": {"queue": "ops", "expires": 3600},
    },
    "purge-outbox": {
        "task": "evaluation.tasks.purge_outbox",
        "schedule": 3600.0,
        "options": {"queue": "ops", "expires": 3600},
    },
    # The home page's "N due for review" (attempts/services/reviews.py); at most this stale.
    "refresh-review-due-counts": {
        "task": "attempts.tasks.refresh_review_due_counts",
        "schedule": 900.0,
        "options": {"queue": "ops", "expires": 900},
    },
    # The staff dashboard's samples of what keeps no history (evaluation/ops_samples.py).
    "take-ops-sample": {
        "task": "evaluation.tasks.take_ops_sample",
        "schedule": 30.0,
        "options": {"queue": "ops", "expires": 30},
    },
    # The invariants' last outcome, exported by /metrics for the alert on it.
    "check-invariants": {
        "task": "attempts.tasks.check_invariants",
        "schedule": 600.0,
        "options": {"queue": "ops", "expires": 600},
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "interviewprep.logging.JsonFormatter"}},
    "filters": {"log_context": {"()": "interviewprep.logging.LogContextFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["log_context"],
        }
    },
    "root": {"handlers": ["console"], "level": CONFIG.log_level},
    "loggers": {
        "django.server": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
        "celery": {"level": "WARNING"},
    },
}
