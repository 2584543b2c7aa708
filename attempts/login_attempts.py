"""How django-axes counts failed logins here (settings.AXES_*), in PostgreSQL so every web process
sees the same counts: per username (in any case) from one client address, locked at
LOGIN_FAILURE_LIMIT, and per address alone, locked at the higher LOGIN_ADDRESS_FAILURE_LIMIT.

A request axes refuses carries `axes_locked_out`; each login surface then says so in its own
way (the token endpoint's problem details, the login pages' form error) and
`attempts.views_auth.login_locked_out_response` makes the answer a 429 with Retry-After."""

from __future__ import annotations

import math
from datetime import datetime

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import (
    get_client_username,
    get_cool_off,
    get_credentials,
    get_failure_limit,
    get_lockout_parameters,
)
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest
from django.utils import timezone

from attempts.throttles import wait_in_words


def login_username_key(request: HttpRequest, credentials: dict | None) -> str | None:
    """AXES_USERNAME_CALLABLE: the name a failure is counted against. In lower case, as logging
    in ignores case: `Ada`, `ADA` and `ada` are one account and must share one count."""
    source = credentials if credentials else request.POST
    username = source.get("username")
    return username.lower() if isinstance(username, str) else None


def login_locked_out(request: HttpRequest) -> bool:
    """Whether axes refused, or has just locked out, this request's login."""
    return bool(getattr(request, "axes_locked_out", False))


def _ceiling(parameter, limit: int) -> int:
    """The failures a lockout parameter allows: an address alone, shared by an office, more."""
    return settings.CONFIG.login_address_failure_limit if parameter == "ip_address" else limit


def _counts(handler, request: HttpRequest, credentials: dict | None) -> list[tuple[int, int, datetime | None]]:
    """(ceiling, failures, latest failure) for each lockout parameter, as axes counts it."""
    limit = get_failure_limit(request, credentials)
    counts = []
    for parameter, attempts in zip(
        get_lockout_parameters(request, credentials), handler.get_user_attempts(request, credentials), strict=True
    ):
        found = attempts.aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
        counts.append((_ceiling(parameter, limit), found["failures"] or 0, found["last"]))
    return counts


class LoginAttemptsHandler(AxesDatabaseHandler):
    """Axes' database handler, with a ceiling per lockout parameter; a success resets its own
    username's count and nothing more.

    Axes would also reset the address's count, so anyone owning an account could wipe, by
    logging into it, the failures they had piled on another name from the same address."""

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """Axes locks at one limit; each count is scaled to it, so it reaches the limit exactly
        when it reaches its own ceiling."""
        limit = get_failure_limit(request, credentials)
        return max(
            (failures * limit // ceiling for ceiling, failures, _ in _counts(self, request, credentials)), default=0
        )

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count


def login_attempts_reset(*, request: HttpRequest, username: str) -> None:
    """A sign-in that is not a session login (a token) resets the count as a login does."""
    LoginAttemptsHandler().reset_user_attempts(request, get_credentials(username))


def login_retry_after(request: HttpRequest, username: str | None) -> int:
    """Whole seconds until this username, from this request's address, may try again (at least 1).

    An upper bound: a count falls below the limit once enough of its failures are older than the
    cool-off, and all of them are once the latest is."""
    # The request's address and time as axes saw them (set already when axes has refused it).
    AxesProxyHandler.update_request(request)
    credentials = get_credentials(username)
    latest = [
        last
        for ceiling, failures, last in _counts(LoginAttemptsHandler(), request, credentials)
        if failures >= ceiling and last is not None
    ]
    if not latest:
        return 1
    remaining = max(latest) + get_cool_off(request) - timezone.now()
    return max(1, math.ceil(remaining.total_seconds()))


def lockout_message(seconds: int) -> str:
    return (
        "Too many failed log-in attempts for this username or from your network, so logging in is "
        f"paused. Try again in {wait_in_words(seconds)}."
    )
