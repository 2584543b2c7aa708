"""Test settings: the real services, on Redis databases of their own so nothing collides with a
running app. Override any of these from the environment (helpers and CI shards do)."""

import os

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/10")
os.environ.setdefault("SUBMIT_RATE", "off")
os.environ.setdefault("HEARTBEAT_INTERVAL", "0.5")
os.environ.setdefault("RETRY_BASE_DELAY", "0.3")
os.environ.setdefault("JOB_TIME_LIMIT", "30")
os.environ.setdefault("SWEEP_INTERVAL", "5")
os.environ.setdefault("LOG_LEVEL", "WARNING")

from interviewprep.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
