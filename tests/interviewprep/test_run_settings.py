"""The settings of runs: their own rate and their own backlog limit, read like the submit ones."""

import pytest

from interviewprep.config import ConfigError, load

pytestmark = pytest.mark.nodb


def test_runs_have_their_own_rate_and_backlog_limit_by_default():
    config = load({})
    assert config.run_rate == "60/min"
    assert config.run_queue_limit == 1000


def test_run_rate_and_limit_are_read_from_the_environment():
    config = load({"RUN_RATE": "5/s", "RUN_QUEUE_LIMIT": "0", "SUBMIT_RATE": "off"})
    assert config.run_rate == "5/s"
    assert config.run_queue_limit == 0
    assert config.submit_rate is None
    assert load({"RUN_RATE": "OFF"}).run_rate is None


@pytest.mark.parametrize(
    ("name", "value"), [("RUN_RATE", "sixty"), ("RUN_RATE", "60/fortnight"), ("RUN_QUEUE_LIMIT", "-1")]
)
def test_a_malformed_run_setting_names_itself(name, value):
    with pytest.raises(ConfigError, match=name):
        load({name: value})
