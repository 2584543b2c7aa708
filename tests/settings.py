"""Test settings: the real services, on Redis databases of their own so nothing collides with a
running app or with another test process. Override any of these from the environment."""

import os
import tempfile
from urllib.parse import urlsplit, urlunsplit

# pytest-xdist's worker ("gw0", "gw1", ...), or none in a plain run; each has its own test
# database (pytest-django adds the suffix), Redis databases and metrics folder.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_index = int(WORKER[2:]) if WORKER.startswith("gw") else 0
# A pair per test process (cache, then locks and broker): never 0/1 (`make run`), 6/7 (the run
# command's tests) or 12 to 15 (the benchmarks).
_REDIS_PAIRS = ((10, 11), (8, 9), (2, 3), (4, 5))
if _index >= len(_REDIS_PAIRS):
    raise RuntimeError(f"at most {len(_REDIS_PAIRS)} test processes at once (pytest -n): each needs Redis databases")

# This process's own metrics folder, set before prometheus_client is first imported; the worker
# processes the tests start inherit it. A folder an app run, or another test process, uses is
# never written to or emptied.
_METRICS_PREFIX = f"ip-test-metrics-{WORKER or 'main'}-"
if not os.path.basename(os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")).startswith(_METRICS_PREFIX):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix=_METRICS_PREFIX)
    from tests.metrics_helpers import own_the_folder

    own_the_folder()

# A REDIS_URL given from outside names the server; the databases are per test process, on that
# server or the default one. The first process remembers what was given, since pytest-xdist's
# workers inherit its environment. A process a test starts is told its URL exactly
# (tests/processes.py).
os.environ.setdefault("IP_TEST_REDIS_URL_GIVEN", os.environ.get("REDIS_URL", ""))
_server = urlsplit(os.environ["IP_TEST_REDIS_URL_GIVEN"] or "redis://127.0.0.1:6379/")
_db = _REDIS_PAIRS[_index][0] if WORKER or not _server.path.strip("/") else int(_server.path.strip("/"))
os.environ["REDIS_URL"] = os.environ.get("IP_TEST_REDIS_URL_EXACT") or urlunsplit(_server._replace(path=f"/{_db}"))
os.environ.setdefault("SUBMIT_RATE", "off")
os.environ.setdefault("RUN_RATE", "off")
# Creating a run answers 202 at once: most tests have no worker to wait for.
os.environ.setdefault("RUN_WAIT_SECONDS", "0")
os.environ.setdefault("REGISTER_RATE", "off")
os.environ.setdefault("HEARTBEAT_INTERVAL", "0.5")
os.environ.setdefault("RETRY_BASE_DELAY", "0.3")
os.environ.setdefault("JOB_TIME_LIMIT", "30")
os.environ.setdefault("SWEEP_INTERVAL", "5")
os.environ.setdefault("LOG_LEVEL", "WARNING")

from interviewprep.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if os.environ.get("IP_TEST_HASHER_GATE"):
    # A web process a test started with a gate: each hash waits for it (tests/hashers.py).
    PASSWORD_HASHERS = ["tests.hashers.GatedHasher"]
