"""Limits on how often a client may do a thing, shared by the API and the pages."""

from __future__ import annotations

import math

from rest_framework.throttling import SimpleRateThrottle

from interviewprep.client import client_address


class RegisterThrottle(SimpleRateThrottle):
    """Registrations per client address at REGISTER_RATE. One counter (in the cache) for the API,
    where DRF applies it, and the register page, which asks it directly: one rule, one place."""

    scope = "register"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request) or "unknown"}


def wait_in_words(seconds: float) -> str:
    """'40 seconds', '15 minutes': how long a refused client waits, for a person to read."""
    seconds = max(1, math.ceil(seconds))
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"
