"""Test settings: the real services, on Redis databases of their own so nothing collides with a
running app. Override any of these from the environment (helpers and CI shards do)."""

import os
import tempfile

# This session's own metrics folder, set before prometheus_client is first imported; the worker
# processes the tests start inherit it. A folder an app run uses is never written to or emptied.
if not os.path.basename(os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")).startswith("ip-test-metrics-"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ip-test-metrics-")
    from tests.metrics_helpers import own_the_folder

    own_the_folder()

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/10")
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
