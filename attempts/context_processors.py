"""What every page's templates read of the candidate's preferences: `blind` (hide difficulty and
topics while practising) and `time_zone` (the zone base.html shows every time in)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from attempts.selectors.preferences import preferences_for_user


def preferences(request: HttpRequest) -> dict[str, Callable[[], object]]:
    # Read once, and only by a page that shows something they change. Templates call a callable
    # when they resolve it, so `{% timezone time_zone %}` gets a real zone.
    found = SimpleLazyObject(lambda: preferences_for_user(user=getattr(request, "user", None)))
    return {
        "preferences": lambda: found,
        "blind": lambda: found.blind,
        "time_zone": lambda: zoneinfo.ZoneInfo(found.time_zone),
    }
