"""Reads of a candidate's preferences."""

from __future__ import annotations

from attempts.models import Preferences


def preferences_for_user(*, user) -> Preferences:
    """The user's preferences, or the defaults (not blind, UTC) as an unsaved row when they have
    never saved any: `preferences.pk is None` says the time zone was never chosen."""
    if not getattr(user, "is_authenticated", False):
        return Preferences()
    return Preferences.objects.filter(user=user).first() or Preferences(user=user)
