"""Configuration read from the environment once, in one place.

Every entry point (manage.py, wsgi, the Celery app, the run command) calls `load()` before
Django starts, so a missing or malformed value stops the process with one line that names the
variable instead of a traceback from deep inside Django.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit


class ConfigError(Exception):
    """A setting is missing or malformed; the message names it."""


@dataclass(frozen=True)
class Config:
    database: dict
    redis_url: str  # cache
    state_redis_url: str  # locks and breaker: apart from the cache's keys, so flushing the cache never touches them
    broker_url: str
    # RabbitMQ only (docs/operations.md, "Brokers"): how often one message may be delivered before
    # the queue drops it, how long a publish waits for the broker's confirm, and how long a
    # consumer may hold a message unacknowledged before the broker closes its channel.
    broker_delivery_limit: int
    broker_confirm_timeout: float
    broker_consumer_timeout: int
    port: int
    static_root: str | None  # where collectstatic puts the files the proxy serves; None: the app serves them
    secret_key: str
    debug: bool
    allowed_hosts: list[str]
    submit_rate: str | None
    register_rate: str | None
    login_failure_limit: int
    login_address_failure_limit: int
    login_cooloff_seconds: int
    production: bool
    behind_proxy: bool
    trusted_proxies: tuple[str, ...]  # networks; a peer in one of them may say who the client is
    hsts_preload: bool
    evaluate_queue_limit: int
    run_rate: str | None
    run_queue_limit: int
    jobs_in_flight_per_user: int  # of one kind, in the broker or running; 0: no limit
    run_wait_seconds: float  # how long creating a run waits for its cases before answering 202
    evaluator_faults: dict[str, float]
    job_time_limit: int
    job_max_tries: int
    heartbeat_interval: float
    retry_base_delay: float
    retry_max_delay: float
    sweep_interval: int
    stale_job_after: int
    worker_stall_after: float  # a worker with room and messages waiting that takes none this long has stalled
    idempotency_ttl_hours: int
    # How long each kind of row is kept before the beat's purges delete it (docs/operations.md).
    run_retention_days: int
    job_try_retention_days: int
    outbox_retention_days: int
    state_change_retention_days: int
    purge_batch_size: int  # rows per purge transaction: short locks, whatever the backlog
    remote_model: dict | None
    log_level: str

    @property
    def broker_is_redis(self) -> bool:
        return urlsplit(self.broker_url).scheme in REDIS_SCHEMES

    @property
    def broker_is_amqp(self) -> bool:
        return not self.broker_is_redis


REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
DEV_SECRET_KEY = "insecure-local-development-key-change-me-in-production"  # noqa: S105
# What `check --deploy` asks of a secret key (security.W009), refused at start instead.
_SECRET_KEY_MIN_LENGTH = 50
_SECRET_KEY_MIN_UNIQUE = 5
_RATE = re.compile(r"^\d+/(s|sec|m|min|h|hour|d|day)$")
_FAULTS = {"delay", "transient", "permanent", "crash_before_commit"}


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean (use true or false)")


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} must be at least {minimum}")
    return value


def _float(env: Mapping[str, str], name: str, default: float, minimum: float = 0) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} must be at least {minimum}")
    return value


def _rate(env: Mapping[str, str], name: str, default: str) -> str | None:
    raw = (env.get(name) or default).strip()
    if raw.lower() == "off":
        return None
    if not _RATE.match(raw):
        raise ConfigError(f"{name}={raw!r} must look like {default} (or be off)")
    return raw


def _secret_key(env: Mapping[str, str], *, production: bool) -> str:
    secret_key = env.get("SECRET_KEY") or ""
    if not production:
        return secret_key or DEV_SECRET_KEY
    if not secret_key or secret_key == DEV_SECRET_KEY:
        raise ConfigError("SECRET_KEY must be set, to a key of your own, when INTERVIEWPREP_PRODUCTION is on")
    if len(secret_key) < _SECRET_KEY_MIN_LENGTH or len(set(secret_key)) < _SECRET_KEY_MIN_UNIQUE:
        raise ConfigError(
            f"SECRET_KEY must be at least {_SECRET_KEY_MIN_LENGTH} random characters when INTERVIEWPREP_PRODUCTION"
            " is on (python -c 'import secrets; print(secrets.token_urlsafe(50))')"
        )
    return secret_key


def _networks(env: Mapping[str, str], name: str, default: str) -> tuple[str, ...]:
    networks = []
    for item in (env.get(name) or default).split(","):
        if not item.strip():
            continue
        try:
            networks.append(str(ipaddress.ip_network(item.strip(), strict=False)))
        except ValueError:
            raise ConfigError(f"{name}: {item.strip()!r} is not an IP address or network") from None
    return tuple(networks)


def _absolute_path(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name) or None
    if raw is not None and not os.path.isabs(raw):
        raise ConfigError(f"{name}={raw!r} must be an absolute path")
    return raw


def parse_database_url(
    url: str,
    name: str = "DATABASE_URL",
    *,
    health_checks: bool = True,
    idle_transaction_timeout: int = 0,
    server_side_cursors: bool = True,
) -> dict:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ConfigError(f"{name}={url!r} must start with postgres:// (PostgreSQL is the only database)")
    db_name = unquote(parts.path.lstrip("/"))
    if not db_name:
        raise ConfigError(f"{name}={url!r} names no database (postgres://host:port/NAME)")
    query = parse_qs(parts.query)
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"{name}={url!r} has a malformed port") from None
    # A unix-socket folder may come as ?host=/path (what the embedded PostgreSQL uses).
    host = query.pop("host", [parts.hostname or ""])[0]
    options = {k: v[0] for k, v in query.items()}
    if idle_transaction_timeout:
        # A process that vanishes without closing its connection (a machine lost, its network
        # cut) leaves its open transaction's row locks held until PostgreSQL ends the session;
        # the sweeper skips locked jobs, so a job would stay stuck until then.
        given = options.get("options", "")
        setting = f"-c idle_in_transaction_session_timeout={idle_transaction_timeout}s"
        options["options"] = f"{given} {setting}".strip()
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": db_name,
        "USER": unquote(parts.username or "") or "postgres",
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or ""),
        # Persistent connections: a new connection per request cut throughput 7x here.
        "CONN_MAX_AGE": 600,
        # Off, a connection is still checked after a request or task that met an error, and one
        # the database dropped unseen fails the one request that next uses it.
        "CONN_HEALTH_CHECKS": health_checks,
        # Off behind PgBouncer in transaction mode, where a cursor cannot outlive its transaction.
        "DISABLE_SERVER_SIDE_CURSORS": not server_side_cursors,
        "OPTIONS": options,
    }


def _redis_url(env: Mapping[str, str], name: str, default: str) -> tuple[str, int]:
    url = env.get(name) or default
    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss", "unix"}:
        raise ConfigError(f"{name}={url!r} must start with redis:// or unix://")
    if parts.scheme == "unix":
        db = parse_qs(parts.query).get("db", ["0"])[0]
    else:
        db = parts.path.lstrip("/") or "0"
    if not db.isdigit() or int(db) > 14:
        raise ConfigError(f"{name}={url!r}: database number must be 0-14 (the next one holds locks)")
    return url, int(db)


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        query["db"] = str(db)
        return parts._replace(query="&".join(f"{k}={v}" for k, v in query.items())).geturl()
    return parts._replace(path=f"/{db}").geturl()


def parse_faults(raw: str | None) -> dict[str, float]:
    if not raw:
        return {}
    faults: dict[str, float] = {}
    for item in raw.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or key not in _FAULTS:
            raise ConfigError(f"EVALUATOR_FAULTS: {item!r} is not one of {', '.join(sorted(_FAULTS))} as name=number")
        try:
            faults[key] = float(value)
        except ValueError:
            raise ConfigError(f"EVALUATOR_FAULTS: {item!r} has no number after '='") from None
        if key != "delay" and not 0 <= faults[key] <= 1:
            raise ConfigError(f"EVALUATOR_FAULTS: {key} is a probability between 0 and 1")
    return faults


def _check_rabbitmq_limits(job_time_limit: int, job_max_tries: int, delivery_limit: int, consumer_timeout: int) -> None:
    # The database bounds a poison job by its tries; a queue that dropped the message first would
    # leave the job to the sweeper instead of its dead letter.
    if delivery_limit <= job_max_tries:
        raise ConfigError(
            f"BROKER_DELIVERY_LIMIT={delivery_limit} must be above JOB_MAX_TRIES={job_max_tries}: RabbitMQ would"
            " drop a job's message before the job ran out of tries"
        )
    # A job holds its message unacknowledged while it runs; past the consumer timeout RabbitMQ
    # closes the worker's channel and every job that worker holds is delivered again.
    if job_time_limit >= consumer_timeout:
        raise ConfigError(
            f"JOB_TIME_LIMIT={job_time_limit} must be below BROKER_CONSUMER_TIMEOUT={consumer_timeout}: RabbitMQ"
            " would close a worker's channel while a job still ran, and deliver its jobs again"
        )


def load(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    database = parse_database_url(
        env.get("DATABASE_URL") or "postgres://127.0.0.1:5432/interviewprep",
        health_checks=_bool(env, "DATABASE_HEALTH_CHECKS", True),
        idle_transaction_timeout=_int(env, "DATABASE_IDLE_TRANSACTION_TIMEOUT", 60),
        server_side_cursors=_bool(env, "DATABASE_SERVER_SIDE_CURSORS", True),
    )
    redis_url, redis_db = _redis_url(env, "REDIS_URL", "redis://127.0.0.1:6379/0")
    state_redis_url = _with_db(redis_url, redis_db + 1)
    broker_url = env.get("CELERY_BROKER_URL") or state_redis_url
    if urlsplit(broker_url).scheme not in REDIS_SCHEMES | {"amqp", "pyamqp"}:
        raise ConfigError(f"CELERY_BROKER_URL={broker_url!r} must be a redis:// or amqp:// URL")
    debug = _bool(env, "DEBUG", False)
    production = _bool(env, "INTERVIEWPREP_PRODUCTION", False)
    if production and debug:
        # Debug pages show settings and code to anyone who makes the app fail.
        raise ConfigError("DEBUG must be off when INTERVIEWPREP_PRODUCTION is on")
    secret_key = _secret_key(env, production=production)
    hosts = [h.strip() for h in (env.get("ALLOWED_HOSTS") or "localhost,127.0.0.1,[::1]").split(",")]
    remote_base = env.get("REMOTE_MODEL_BASE_URL")
    remote_model = None
    if remote_base:
        if not remote_base.startswith(("http://", "https://")):
            raise ConfigError(f"REMOTE_MODEL_BASE_URL={remote_base!r} must be an http(s) URL")
        remote_model = {
            "base_url": remote_base.rstrip("/"),
            "model": env.get("REMOTE_MODEL_NAME") or "gpt-4o-mini",
            "api_key": env.get("REMOTE_MODEL_API_KEY") or "",
            "timeout": _float(env, "REMOTE_MODEL_TIMEOUT", 20.0, minimum=0.1),
        }
    job_time_limit = _int(env, "JOB_TIME_LIMIT", 120, minimum=1)
    sweep_interval = _int(env, "SWEEP_INTERVAL", 30, minimum=1)
    job_max_tries = _int(env, "JOB_MAX_TRIES", 5, minimum=1)
    broker_delivery_limit = _int(env, "BROKER_DELIVERY_LIMIT", 20, minimum=1)
    broker_consumer_timeout = _int(env, "BROKER_CONSUMER_TIMEOUT", 1800, minimum=1)
    log_level = (env.get("LOG_LEVEL") or "INFO").upper()
    if log_level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"LOG_LEVEL={log_level!r} must be DEBUG, INFO, WARNING or ERROR")
    config = Config(
        database=database,
        redis_url=redis_url,
        state_redis_url=state_redis_url,
        broker_url=broker_url,
        broker_delivery_limit=broker_delivery_limit,
        broker_confirm_timeout=_float(env, "BROKER_CONFIRM_TIMEOUT", 2.0, minimum=0.1),
        broker_consumer_timeout=broker_consumer_timeout,
        port=_int(env, "PORT", 8000, minimum=1),
        static_root=_absolute_path(env, "STATIC_ROOT"),
        secret_key=secret_key,
        debug=debug,
        allowed_hosts=[h for h in hosts if h],
        submit_rate=_rate(env, "SUBMIT_RATE", "30/min"),
        register_rate=_rate(env, "REGISTER_RATE", "10/hour"),
        login_failure_limit=_int(env, "LOGIN_FAILURE_LIMIT", 5, minimum=1),
        login_address_failure_limit=_int(env, "LOGIN_ADDRESS_FAILURE_LIMIT", 50, minimum=1),
        login_cooloff_seconds=_int(env, "LOGIN_COOLOFF_SECONDS", 900, minimum=1),
        production=production,
        behind_proxy=_bool(env, "BEHIND_PROXY", False),
        trusted_proxies=_networks(env, "TRUSTED_PROXIES", "127.0.0.1,::1"),
        hsts_preload=_bool(env, "HSTS_PRELOAD", False),
        evaluate_queue_limit=_int(env, "EVALUATE_QUEUE_LIMIT", 10000),
        run_rate=_rate(env, "RUN_RATE", "60/min"),
        run_queue_limit=_int(env, "RUN_QUEUE_LIMIT", 1000),
        jobs_in_flight_per_user=_int(env, "JOBS_IN_FLIGHT_PER_USER", 2),
        run_wait_seconds=_float(env, "RUN_WAIT_SECONDS", 10.0),
        evaluator_faults=parse_faults(env.get("EVALUATOR_FAULTS")),
        job_time_limit=job_time_limit,
        job_max_tries=job_max_tries,
        heartbeat_interval=_float(env, "HEARTBEAT_INTERVAL", 2.0, minimum=0.05),
        retry_base_delay=_float(env, "RETRY_BASE_DELAY", 2.0, minimum=0.01),
        retry_max_delay=_float(env, "RETRY_MAX_DELAY", 300.0, minimum=0.01),
        sweep_interval=sweep_interval,
        worker_stall_after=_float(env, "WORKER_STALL_AFTER", 60.0, minimum=1.0),
        # A running job's heartbeat older than this is dead: its worker cannot still be inside
        # the hard time limit, and two sweeps have had their chance.
        stale_job_after=_int(env, "STALE_JOB_AFTER", job_time_limit + 2 * sweep_interval, minimum=1),
        idempotency_ttl_hours=_int(env, "IDEMPOTENCY_TTL_HOURS", 72, minimum=24),
        run_retention_days=_int(env, "RUN_RETENTION_DAYS", 7, minimum=1),
        job_try_retention_days=_int(env, "JOB_TRY_RETENTION_DAYS", 90, minimum=1),
        outbox_retention_days=_int(env, "OUTBOX_RETENTION_DAYS", 7, minimum=1),
        state_change_retention_days=_int(env, "STATE_CHANGE_RETENTION_DAYS", 90, minimum=1),
        purge_batch_size=_int(env, "PURGE_BATCH_SIZE", 1000, minimum=1),
        remote_model=remote_model,
        log_level=log_level,
    )
    if config.broker_is_amqp:
        _check_rabbitmq_limits(job_time_limit, job_max_tries, broker_delivery_limit, broker_consumer_timeout)
    return config


def load_or_exit() -> Config:
    """Load the configuration, or print one clear line and exit with status 2."""
    try:
        return load()
    except ConfigError as exc:
        print(f"interviewprep: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
