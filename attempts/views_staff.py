"""Staff pages: the cache diff and the timeline of one attempt, for a person (the API gives the
same as JSON)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from attempts.cache import attempt_cache_diff
from attempts.selectors.timeline import attempt_timeline

COMPARED_FIELDS = ("version", "status", "latest_submission_id", "result", "updated_at")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str)


@never_cache
@staff_member_required
def attempt_cache_diff_page(request: HttpRequest, attempt_id: int) -> HttpResponse:
    diff = attempt_cache_diff(attempt_id=attempt_id)
    database = diff["database"]
    if database is None:
        raise Http404(f"There is no attempt {attempt_id}.")
    cached = diff["cache"]
    rows = [
        {
            "field": field,
            "cache": _pretty(cached.get(field)) if cached is not None else "—",
            "database": _pretty(database.get(field)),
            "same": cached is not None and cached.get(field) == database.get(field),
        }
        for field in COMPARED_FIELDS
    ]
    context = {
        "attempt_id": attempt_id,
        "consistent": diff["consistent"],
        "cached": cached is not None,
        "floor": diff.get("floor"),
        "cache_error": diff.get("cache_error"),
        "rows": rows,
        "cache_json": _pretty(cached) if cached is not None else "",
        "database_json": _pretty(database),
    }
    return render(request, "staff/cache_diff.html", context)


@never_cache
@staff_member_required
def attempt_timeline_page(request: HttpRequest, attempt_id: int) -> HttpResponse:
    timeline = attempt_timeline(attempt_id=attempt_id)
    if timeline is None:
        raise Http404(f"There is no attempt {attempt_id}.")
    context = {
        "attempt_id": attempt_id,
        "events": timeline.events,
        "cache_writes_shown": timeline.cache_writes_shown,
    }
    return render(request, "staff/timeline.html", context)
