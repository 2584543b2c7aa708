"""The settings of runs: their own rate and their own backlog limit, read like the submit ones."""

import pytest

from interviewprep.config import ConfigError, load
from interviewprep.processes import parse_procfile
from tests.processes import ROOT

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


UNSHARED = ("--queues", "--concurrency", "--hostname")


def _flag(command: str, name: str) -> str:
    words = command.split()
    return words[words.index(name) + 1]


def _shared(command: str) -> list[str]:
    """The command without the flags each worker sets for itself."""
    words = command.split()
    own = {i for name in UNSHARED for i in (words.index(name), words.index(name) + 1)}
    return [word for i, word in enumerate(words) if i not in own]


def test_runs_have_a_worker_of_their_own_with_the_evaluate_workers_flags():
    commands = {entry.name: entry.command for entry in parse_procfile(ROOT / "Procfile")}
    run, evaluate = commands["worker-run"], commands["worker"]
    assert [_flag(run, name) for name in UNSHARED] == ["run", "2", "run@%h"]
    assert "run" not in _flag(evaluate, "--queues").split(",")
    assert _shared(run) == _shared(evaluate)
