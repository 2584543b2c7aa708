"""How the pages speak to one candidate: blind mode and the time zone times are shown in."""

from __future__ import annotations

import zoneinfo
from functools import cache
from typing import Any

from attempts.models import Preferences
from interviewprep.errors import InvalidInput


@cache
def time_zones() -> tuple[str, ...]:
    """Every IANA zone this machine knows, sorted: the choices of the settings page."""
    return tuple(sorted(zoneinfo.available_timezones()))


def time_zone_validate(name: Any) -> str:
    if not isinstance(name, str) or name not in time_zones():
        raise InvalidInput(
            f"{name!r} is not a time zone this server knows (for example Europe/Paris).", field="time_zone"
        )
    return name


def preferences_save(*, user, blind: bool, time_zone: Any) -> Preferences:
    """Set both preferences at once (the settings form sends both)."""
    zone = time_zone_validate(time_zone)
    preferences, _ = Preferences.objects.update_or_create(user=user, defaults={"blind": bool(blind), "time_zone": zone})
    return preferences
