"""The candidate's own time zone, which every time on the pages is shown in."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attempts.models import Preferences

UTC = ZoneInfo("UTC")


def time_zone_or_utc(name: str | None) -> ZoneInfo:
    """The zone an IANA name names; UTC for an empty, unknown or malformed one (a zone retired
    from the system's tz database must not break every page of whoever chose it)."""
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def preferences_time_zone(*, user: Any) -> ZoneInfo:
    """The zone `user` chose in their preferences; UTC for anyone who chose none."""
    if not getattr(user, "is_authenticated", False):
        return UTC
    name = Preferences.objects.filter(user_id=user.pk).values_list("time_zone", flat=True).first()
    return time_zone_or_utc(name)
