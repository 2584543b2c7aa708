"""The app's URLs plus the same-stack baselines: each does one thing behind the same middleware,
token authentication, permission check and renderer as the API, answering JSON. The floor an API
view can reach on this stack (the bare Django floor is `bare_urls.py`)."""

from __future__ import annotations

from django.core.cache import cache
from django.http import Http404
from django.urls import include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts.models import Attempt
from benchmarks.bare_urls import bare_key
from interviewprep.urls import handler404, handler500  # noqa: F401 - the same error pages


class StackCacheGetView(APIView):
    """One django-redis `cache.get`."""

    def get(self, request: Request, attempt_id: int) -> Response:
        payload = cache.get(bare_key(attempt_id))
        if payload is None:
            raise Http404
        return Response(payload)


class StackOrmReadView(APIView):
    """One ORM get by primary key."""

    def get(self, request: Request, attempt_id: int) -> Response:
        attempt = Attempt.objects.get(pk=attempt_id)
        return Response({"id": attempt.pk, "status": attempt.status, "version": attempt.version})


urlpatterns = [
    path("bench/cache-get/<int:attempt_id>/", StackCacheGetView.as_view(), name="bench-cache-get"),
    path("bench/orm-read/<int:attempt_id>/", StackOrmReadView.as_view(), name="bench-orm-read"),
    path("", include("interviewprep.urls")),
]
