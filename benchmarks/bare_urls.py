"""The bare Django views (`bare_settings.py`): each does the one thing an app view is compared
with, plain Django from the URL to a JsonResponse."""

from __future__ import annotations

import json

from django.core.cache import cache
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.urls import path

from attempts.models import Attempt, StateChange


def bare_key(attempt_id: int) -> str:
    """Where the benchmarks put the attempt payloads the two bare cache reads answer."""
    return f"bench:attempt:{attempt_id}"


def healthz(request) -> HttpResponse:
    return HttpResponse("ok")


def cache_get(request, attempt_id: int) -> JsonResponse:
    payload = cache.get(bare_key(attempt_id))
    if payload is None:
        raise Http404
    return JsonResponse(payload)


def orm_read(request, attempt_id: int) -> JsonResponse:
    attempt = Attempt.objects.get(pk=attempt_id)
    return JsonResponse({"id": attempt.pk, "status": attempt.status, "version": attempt.version})


def orm_write(request, attempt_id: int) -> HttpResponse:
    """One row inserted in autocommit (one commit, as a submit makes): a row of a table no
    benchmark counts, so the submit benchmark's own checks stay exact."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    answer = json.loads(request.body).get("answer", "")
    change = StateChange.objects.create(
        entity="bench", object_id=attempt_id, from_status="draft", to_status="draft", actor="bench", reason=answer[:200]
    )
    return JsonResponse({"id": change.pk}, status=201)


urlpatterns = [
    path("healthz", healthz),
    path("bare/cache-get/<int:attempt_id>/", cache_get),
    path("bare/orm-read/<int:attempt_id>/", orm_read),
    path("bare/orm-write/<int:attempt_id>/", orm_write),
]
