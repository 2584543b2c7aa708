"""What every page's templates read of the candidate's preferences: `blind` (hide difficulty and
topics while practising). The time zone is the middleware's (attempts.middleware)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from attempts.selectors.preferences import preferences_for_user


def preferences(request: HttpRequest) -> dict[str, Callable[[], object]]:
    # The middleware's read when it ran; otherwise once, and only by a page that shows blind mode.
    found = getattr(request, "preferences", None) or SimpleLazyObject(
        lambda: preferences_for_user(user=getattr(request, "user", None))
    )
    return {
        "preferences": lambda: found,
        "blind": lambda: found.blind,
    }
