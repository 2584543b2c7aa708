"""deploy/rabbitmq/rabbitmq.conf agrees with the app's own limits: RabbitMQ 3.10 honours only
the node's consumer_timeout, so it must be the app's BROKER_CONSUMER_TIMEOUT."""

import pytest

from interviewprep.config import load
from interviewprep.processes import ROOT

pytestmark = pytest.mark.nodb


def _settings() -> dict[str, str]:
    lines = (ROOT / "deploy" / "rabbitmq" / "rabbitmq.conf").read_text().splitlines()
    pairs = [line.split("=", 1) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return {key.strip(): value.strip() for key, value in pairs}


def test_the_consumer_timeout_is_the_apps_and_above_the_job_time_limit():
    config = load({"CELERY_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672/interviewprep"})
    conf = _settings()
    assert int(conf["consumer_timeout"]) == config.broker_consumer_timeout * 1000 == 1_800_000
    assert int(conf["consumer_timeout"]) > config.job_time_limit * 1000


def test_the_broker_listens_on_the_loopback_and_alarms_before_memory_or_disk_run_out():
    conf = _settings()
    assert conf["listeners.tcp.local"] == "127.0.0.1:5672"
    assert 0 < float(conf["vm_memory_high_watermark.relative"]) <= 0.5
    assert conf["disk_free_limit.absolute"].endswith("GB")
