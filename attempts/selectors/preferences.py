"""Reads of a candidate's preferences: blind mode, and the time zone every page speaks in."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attempts.models import Preferences

UTC = ZoneInfo("UTC")


def preferences_for_user(*, user) -> Preferences:
    """The user's preferences, or the defaults (not blind, UTC) as an unsaved row when they have
    never saved any: `preferences.pk is None` says the time zone was never chosen."""
    if not getattr(user, "is_authenticated", False):
        return Preferences()
    return Preferences.objects.filter(user=user).first() or Preferences(user=user)


def time_zone_or_utc(name: str | None) -> ZoneInfo:
    """The zone an IANA name names; UTC for an empty, unknown or malformed one (a zone retired
    from the system's tz database must not break every page of whoever chose it)."""
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC
