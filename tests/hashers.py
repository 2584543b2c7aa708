"""A password hasher that holds each hash until the test opens its gate, so a test can keep a
sign-up or a log-in hashing for as long as it needs (IP_TEST_HASHER_GATE names the folder)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from django.contrib.auth.hashers import MD5PasswordHasher


def gate() -> Path:
    return Path(os.environ["IP_TEST_HASHER_GATE"])


class GatedHasher(MD5PasswordHasher):
    algorithm = "gated_md5"

    def encode(self, password: str, salt: str) -> str:
        # "entered-<n>" says a hash has begun; it ends once "open" exists (polled, up to a minute).
        (gate() / f"entered-{uuid.uuid4().hex}").touch()
        deadline = time.monotonic() + 60
        while not (gate() / "open").exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the hasher's gate never opened")
            time.sleep(0.01)
        return super().encode(password, salt)
