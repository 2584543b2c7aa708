"""The progress page and the review list: one selector call each, drawn by their templates."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from attempts.charts import score_line_chart, solved_bar_chart
from attempts.forms import IdempotencyKeyField, idempotency_key_new
from attempts.selectors.progress import progress_for_user
from attempts.selectors.reviews import REVIEW_QUERY, Review, review_list_for_user, review_questions
from attempts.services.practice import practice_request_create
from attempts.views_common import redirect_once
from interviewprep.errors import IdempotencyKeyReused


class DuePracticeForm(forms.Form):
    idempotency_key = IdempotencyKeyField()


@login_required
def progress_page(request: HttpRequest) -> HttpResponse:
    progress = progress_for_user(user_id=request.user.pk)
    context = {
        "progress": progress,
        "line": score_line_chart(progress.over_time),
        "kind_bars": solved_bar_chart(progress.by_kind),
        "difficulty_bars": solved_bar_chart(progress.by_difficulty),
        "topic_bars": solved_bar_chart(progress.by_topic),
    }
    return render(request, "progress/page.html", context)


def _rows(reviews: list[Review]) -> list[dict[str, Any]]:
    questions = review_questions(reviews)
    return [
        {
            "review": review,
            "question": questions[review.question_id],
            "url": reverse("attempt", kwargs={"attempt_id": review.last_attempt_id}) + REVIEW_QUERY,
        }
        for review in reviews
    ]


@login_required
@require_http_methods(["GET"])
def review_page(request: HttpRequest) -> HttpResponse:
    return _review_page(request)


def _review_page(request: HttpRequest, *, error: str | None = None, status: int = 200) -> HttpResponse:
    now = timezone.now()
    reviews = review_list_for_user(user_id=request.user.pk)
    context = {
        "due": _rows([review for review in reviews if review.is_due(now)]),
        "upcoming": _rows([review for review in reviews if not review.is_due(now)]),
        "form": DuePracticeForm(initial={"idempotency_key": idempotency_key_new()}),
        "error": error,
    }
    return render(request, "review/page.html", context, status=status)


@login_required
@require_POST
def review_practise(request: HttpRequest) -> HttpResponse:
    """ "Practise what is due": a practice request with `due`, followed on its own page."""
    form = DuePracticeForm(request.POST)
    if not form.is_valid():
        return redirect("review")
    key = form.cleaned_data["idempotency_key"]

    def work() -> tuple[int, bytes]:
        practice = practice_request_create(user=request.user, due=True, correlation_id=key)
        return 303, reverse("practice_request", kwargs={"practice_request_id": practice.pk}).encode()

    try:
        return redirect_once(request, key, {"due": True}, work)
    except IdempotencyKeyReused:
        return _review_page(
            request, error="This button was already used for another request. Press it again.", status=422
        )
