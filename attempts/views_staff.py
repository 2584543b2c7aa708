"""Staff pages: the cache diff and the timeline of one attempt, and the operations dashboard, for
a person (the API gives the same as JSON)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from attempts.cache import attempt_cache_diff
from attempts.charts import dashboard_charts
from attempts.selectors.timeline import attempt_timeline
from evaluation.dashboard import ops_dashboard

# How often the dashboard's script fetches its panels again.
DASHBOARD_REFRESH_SECONDS = 10

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


def _staff_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """staff_member_required's login redirect for the anonymous; a signed-in non-staff user is
    refused (403) rather than sent to a login they have already passed."""
    guarded = staff_member_required(view)

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and not request.user.is_staff:
            raise PermissionDenied("The dashboard is for staff.")
        return guarded(request, *args, **kwargs)

    return wrapped


def _dashboard_context() -> dict[str, Any]:
    dashboard = ops_dashboard()
    return {"dashboard": dashboard, "charts": dashboard_charts(dashboard)}


@never_cache
@_staff_only
def ops_dashboard_page(request: HttpRequest) -> HttpResponse:
    context = {**_dashboard_context(), "refresh_seconds": DASHBOARD_REFRESH_SECONDS}
    return render(request, "staff/dashboard.html", context)


@never_cache
@_staff_only
def ops_dashboard_panels(request: HttpRequest) -> HttpResponse:
    """The page's panels alone, fetched by static/js/dashboard.js to refresh them in place."""
    return render(request, "staff/_dashboard_panels.html", _dashboard_context())
