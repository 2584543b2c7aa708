"""The app's URLs plus `GET /bench/cache-get/<id>/`: one django-redis `cache.get` behind the same
token authentication, permission check and renderer as the API: the floor a cached read can reach."""

from __future__ import annotations

from django.core.cache import cache
from django.http import Http404
from django.urls import include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from interviewprep.urls import handler404, handler500  # noqa: F401 - the same error pages


def bare_key(attempt_id: int) -> str:
    return f"bench:attempt:{attempt_id}"


class BareCacheGetView(APIView):
    def get(self, request: Request, attempt_id: int) -> Response:
        payload = cache.get(bare_key(attempt_id))
        if payload is None:
            raise Http404
        return Response(payload)


urlpatterns = [
    path("bench/cache-get/<int:attempt_id>/", BareCacheGetView.as_view(), name="bench-cache-get"),
    path("", include("interviewprep.urls")),
]
