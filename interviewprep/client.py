"""Where a request comes from, for limits per client address (login failures, registrations)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    """REMOTE_ADDR; behind our own proxy (BEHIND_PROXY), the first X-Forwarded-For address.

    Only that proxy may be believed, and only if it sets the header itself rather than appending
    to one the client sent (docs/operations.md). A value that is not an address falls back to
    REMOTE_ADDR: it would otherwise be a free new identity for every request."""
    if settings.BEHIND_PROXY:
        first = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[0].strip()
        try:
            return str(ipaddress.ip_address(first))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR") or None
