"""Missing or malformed settings give one clear line, not a traceback."""

import os
import subprocess
import sys

import pytest

from interviewprep.config import ConfigError, load
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
    assert config.evaluate_queue_limit == 10000
    assert config.evaluator_faults == {}
    assert config.idempotency_ttl_hours >= 24


def test_values_are_read_from_the_environment():
    config = load(
        {
            "DATABASE_URL": "postgres://u:p%40ss@db.example:6543/practice",
            "REDIS_URL": "redis://cache:6380/3",
            "SUBMIT_RATE": "off",
            "EVALUATE_QUEUE_LIMIT": "0",
            "EVALUATOR_FAULTS": "delay=2.5,transient=0.2,crash_before_commit=0.1",
            "DEBUG": "true",
        }
    )
    assert config.database["PASSWORD"] == "p@ss" and config.database["PORT"] == "6543"
    assert config.state_redis_url == "redis://cache:6380/4"
    assert config.broker_url == "redis://cache:6380/4"
    assert config.submit_rate is None
    assert config.evaluate_queue_limit == 0
    assert config.evaluator_faults == {"delay": 2.5, "transient": 0.2, "crash_before_commit": 0.1}
    assert config.debug is True


def test_database_health_checks_are_on_unless_a_process_turns_them_off():
    assert load({}).database["CONN_HEALTH_CHECKS"] is True
    assert load({"DATABASE_HEALTH_CHECKS": "false"}).database["CONN_HEALTH_CHECKS"] is False


def test_the_procfile_web_tier_runs_without_database_health_checks():
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "--env DATABASE_HEALTH_CHECKS=false" in web


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
        ("SUBMIT_RATE", "lots", "30/min"),
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
