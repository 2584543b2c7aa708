"""Pages speak in the candidate's own time zone: Django's current zone is theirs while a page
renders, so every `{{ value|when }}` (attempts/templatetags/clock.py) shows local time."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.utils import timezone

from attempts.selectors.preferences import preferences_for_user, time_zone_or_utc
from interviewprep.middleware import BothChains


def _speaks_json(request) -> bool:
    # The API speaks UTC whoever asks: DRF renders datetimes in the current zone, so it stays
    # the default there, and an API request costs no preferences read.
    return request.path.startswith("/api/")


def _activate(request, preferences) -> None:
    # Kept on the request, so the templates' `blind` (attempts.context_processors) reads no more.
    request.preferences = preferences
    timezone.activate(time_zone_or_utc(preferences.time_zone))


class TimeZoneMiddleware(BothChains):
    """Activates the signed-in candidate's zone (UTC otherwise) around the view, in the sync
    chain and the async one alike (an async view's wait must not be pushed onto a thread)."""

    def __call__(self, request):
        if self.async_mode:
            return self._acall(request)
        if _speaks_json(request):
            return self.get_response(request)
        _activate(request, preferences_for_user(user=request.user))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

    async def _acall(self, request):
        if _speaks_json(request):
            return await self.get_response(request)
        user = await request.auser()
        _activate(request, await sync_to_async(preferences_for_user)(user=user))
        try:
            return await self.get_response(request)
        finally:
            timezone.deactivate()
