"""Missing or malformed settings give one clear line, not a traceback."""

import os
import subprocess
import sys

import pytest

from interviewprep.config import DEV_SECRET_KEY, ConfigError, load
from tests.processes import ROOT

pytestmark = pytest.mark.nodb


def test_defaults_follow_the_public_contract():
    config = load({})
    assert config.database["NAME"] == "interviewprep"
    assert config.database["HOST"] == "127.0.0.1" and config.database["PORT"] == "5432"
    assert config.database["CONN_MAX_AGE"] > 0
    assert config.redis_url == "redis://127.0.0.1:6379/0"
    assert config.broker_url == "redis://127.0.0.1:6379/1"
    assert config.port == 8000
    assert config.debug is False
    assert config.submit_rate == "30/min"
    assert config.register_rate == "10/hour"
    assert config.login_failure_limit == 5 and config.login_cooloff_seconds == 900
    assert config.production is False and config.behind_proxy is False and config.hsts_preload is False
    assert config.evaluate_queue_limit == 10000
    assert config.evaluator_faults == {}
    assert config.idempotency_ttl_hours >= 24
    assert (config.run_retention_days, config.job_try_retention_days, config.state_change_retention_days) == (7, 90, 90)
    assert config.outbox_retention_days == 7
    assert config.purge_batch_size == 1000


def test_values_are_read_from_the_environment():
    config = load(
        {
            "DATABASE_URL": "postgres://u:p%40ss@db.example:6543/practice",
            "REDIS_URL": "redis://cache:6380/3",
            "SUBMIT_RATE": "off",
            "REGISTER_RATE": "3/min",
            "LOGIN_FAILURE_LIMIT": "10",
            "LOGIN_COOLOFF_SECONDS": "60",
            "BEHIND_PROXY": "true",
            "EVALUATE_QUEUE_LIMIT": "0",
            "EVALUATOR_FAULTS": "delay=2.5,transient=0.2,crash_before_commit=0.1",
            "DEBUG": "true",
        }
    )
    assert config.database["PASSWORD"] == "p@ss" and config.database["PORT"] == "6543"
    assert config.state_redis_url == "redis://cache:6380/4"
    assert config.broker_url == "redis://cache:6380/4"
    assert config.submit_rate is None
    assert config.register_rate == "3/min"
    assert config.login_failure_limit == 10 and config.login_cooloff_seconds == 60
    assert config.behind_proxy is True
    assert load({"REGISTER_RATE": "off"}).register_rate is None
    assert config.evaluate_queue_limit == 0
    assert config.evaluator_faults == {"delay": 2.5, "transient": 0.2, "crash_before_commit": 0.1}
    assert config.debug is True


def test_database_health_checks_are_on_unless_a_process_turns_them_off():
    assert load({}).database["CONN_HEALTH_CHECKS"] is True
    assert load({"DATABASE_HEALTH_CHECKS": "false"}).database["CONN_HEALTH_CHECKS"] is False


def test_server_side_cursors_can_be_turned_off_for_pgbouncer_from_the_environment():
    assert load({}).database["DISABLE_SERVER_SIDE_CURSORS"] is False
    assert load({"DATABASE_SERVER_SIDE_CURSORS": "false"}).database["DISABLE_SERVER_SIDE_CURSORS"] is True


def test_the_procfile_web_tier_runs_without_database_health_checks():
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "--env DATABASE_HEALTH_CHECKS=false" in web


def test_a_transaction_left_idle_is_ended_after_the_timeout_and_given_options_are_kept():
    assert load({}).database["OPTIONS"] == {"options": "-c idle_in_transaction_session_timeout=60s"}
    given = load(
        {
            "DATABASE_URL": "postgres://h/db?sslmode=require&options=-c%20statement_timeout%3D5s",
            "DATABASE_IDLE_TRANSACTION_TIMEOUT": "7",
        }
    )
    assert given.database["OPTIONS"] == {
        "sslmode": "require",
        "options": "-c statement_timeout=5s -c idle_in_transaction_session_timeout=7s",
    }
    assert load({"DATABASE_IDLE_TRANSACTION_TIMEOUT": "0"}).database["OPTIONS"] == {}


def test_unix_socket_database_host_is_passed_as_a_query():
    config = load({"DATABASE_URL": "postgres://postgres@/interviewprep?host=/tmp/pg"})
    assert config.database["HOST"] == "/tmp/pg"


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("DATABASE_URL", "mysql://x/y", "must start with postgres://"),
        ("DATABASE_URL", "postgres://host:5432/", "names no database"),
        ("REDIS_URL", "http://x", "must start with redis://"),
        ("REDIS_URL", "redis://x:6379/15", "0-14"),
        ("PORT", "eighty", "not a whole number"),
        ("DEBUG", "maybe", "not a boolean"),
        ("DATABASE_HEALTH_CHECKS", "sometimes", "not a boolean"),
        ("DATABASE_SERVER_SIDE_CURSORS", "maybe", "not a boolean"),
        ("DATABASE_IDLE_TRANSACTION_TIMEOUT", "-1", "at least 0"),
        ("SUBMIT_RATE", "lots", "30/min"),
        ("REGISTER_RATE", "many", "10/hour"),
        ("LOGIN_FAILURE_LIMIT", "0", "at least 1"),
        ("LOGIN_COOLOFF_SECONDS", "soon", "not a whole number"),
        ("BEHIND_PROXY", "perhaps", "not a boolean"),
        ("INTERVIEWPREP_PRODUCTION", "prod", "not a boolean"),
        ("HSTS_PRELOAD", "later", "not a boolean"),
        ("EVALUATE_QUEUE_LIMIT", "-1", "at least 0"),
        ("EVALUATOR_FAULTS", "explode=1", "is not one of"),
        ("EVALUATOR_FAULTS", "transient=2", "probability"),
        ("CELERY_BROKER_URL", "kafka://x", "redis:// or amqp://"),
    ],
)
def test_malformed_values_name_the_variable(name, value, words):
    with pytest.raises(ConfigError) as error:
        load({name: value})
    assert name in str(error.value)
    assert words in str(error.value)


def test_a_bad_value_stops_manage_py_with_one_line():
    env = {**os.environ, "PORT": "eighty"}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == ["interviewprep: configuration error: PORT='eighty' is not a whole number"]


STRONG_KEY = "k3y-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"


def test_production_needs_a_secret_key_of_its_own():
    with pytest.raises(ConfigError, match="SECRET_KEY must be set"):
        load({"INTERVIEWPREP_PRODUCTION": "true"})
    with pytest.raises(ConfigError, match="SECRET_KEY must be set"):
        load({"INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": DEV_SECRET_KEY})
    with pytest.raises(ConfigError, match="SECRET_KEY must be at least 50"):
        load({"INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": "short"})
    config = load({"INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": STRONG_KEY})
    assert config.production is True and config.secret_key == STRONG_KEY


def test_production_refuses_debug():
    with pytest.raises(ConfigError, match="DEBUG must be off"):
        load({"INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": STRONG_KEY, "DEBUG": "true"})


def test_without_production_the_development_key_is_used():
    assert load({}).secret_key == DEV_SECRET_KEY
    assert load({"SECRET_KEY": STRONG_KEY}).secret_key == STRONG_KEY


def test_production_with_the_development_key_stops_manage_py_with_one_line():
    env = {**os.environ, "INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": DEV_SECRET_KEY}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interviewprep: configuration error: SECRET_KEY must be set")


AMQP = "amqp://guest:guest@rabbit.example:5672/interviewprep"


def test_rabbitmq_limits_default_to_the_documented_values():
    config = load({"CELERY_BROKER_URL": AMQP})
    assert config.broker_is_amqp and not config.broker_is_redis
    assert config.broker_delivery_limit == 20
    assert config.broker_confirm_timeout == 2.0
    assert config.broker_consumer_timeout == 1800
    assert not load({}).broker_is_amqp


def test_a_delivery_limit_at_or_below_the_tries_is_refused_with_rabbitmq():
    with pytest.raises(ConfigError) as error:
        load({"CELERY_BROKER_URL": AMQP, "JOB_MAX_TRIES": "5", "BROKER_DELIVERY_LIMIT": "5"})
    assert str(error.value).startswith("BROKER_DELIVERY_LIMIT=5 must be above JOB_MAX_TRIES=5")
    assert load({"CELERY_BROKER_URL": AMQP, "JOB_MAX_TRIES": "5", "BROKER_DELIVERY_LIMIT": "6"})
    # Redis has no delivery limit to outrun.
    assert load({"JOB_MAX_TRIES": "5", "BROKER_DELIVERY_LIMIT": "5"}).broker_delivery_limit == 5


def test_a_job_time_limit_at_or_above_the_consumer_timeout_is_refused_with_rabbitmq():
    with pytest.raises(ConfigError) as error:
        load({"CELERY_BROKER_URL": AMQP, "JOB_TIME_LIMIT": "1800"})
    assert str(error.value).startswith("JOB_TIME_LIMIT=1800 must be below BROKER_CONSUMER_TIMEOUT=1800")
    with pytest.raises(ConfigError, match="JOB_TIME_LIMIT=120 must be below BROKER_CONSUMER_TIMEOUT=60"):
        load({"CELERY_BROKER_URL": AMQP, "BROKER_CONSUMER_TIMEOUT": "60"})
    assert load({"CELERY_BROKER_URL": AMQP, "JOB_TIME_LIMIT": "1799"}).job_time_limit == 1799
    assert load({"JOB_TIME_LIMIT": "3600"}).job_time_limit == 3600


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("BROKER_DELIVERY_LIMIT", "many", "not a whole number"),
        ("BROKER_CONSUMER_TIMEOUT", "0", "at least 1"),
        ("BROKER_CONFIRM_TIMEOUT", "0", "at least 0.1"),
    ],
)
def test_malformed_rabbitmq_values_name_the_variable(name, value, words):
    with pytest.raises(ConfigError) as error:
        load({"CELERY_BROKER_URL": AMQP, name: value})
    assert name in str(error.value) and words in str(error.value)
