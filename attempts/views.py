"""Server-rendered pages. Each view adapts, as the API classes do: a Form in, one service (or
selector) call, a template out. Every refusal of a service becomes a message on the same page,
with the candidate's text kept."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from attempts.forms import AttemptStartForm, PracticeRequestForm, RegisterForm, idempotency_key_new
from attempts.forms_history import TOPIC_SUGGESTIONS_ID, QuestionSearchForm
from attempts.models import Attempt, PracticeRequestStatus, Question, QuestionKind
from attempts.presenting import examples_view, percent
from attempts.selectors.attempts import attempt_list_for_user, attempt_rows, practice_request_get_for_user
from attempts.selectors.catalogue import question_catalogue
from attempts.selectors.history import attempt_latest_for_question
from attempts.selectors.questions import question_get, question_starter_codes
from attempts.services.accounts import user_register
from attempts.services.attempts import attempt_continue_or_create, attempt_create
from attempts.services.practice import practice_request_create
from attempts.throttles import RegisterThrottle, wait_in_words
from attempts.views_common import redirect_once
from evaluation.languages import DEFAULT_LANGUAGE, LANGUAGES
from interviewprep.errors import IdempotencyKeyReused, InvalidInput, NotFound

QUESTIONS_PER_PAGE = 20
ATTEMPTS_PER_PAGE = 20
# The practice status page redraws itself this often while a question is being chosen.
REFRESH_SECONDS = 2
PENDING_PRACTICE = (PracticeRequestStatus.QUEUED, PracticeRequestStatus.PROCESSING)


# --- presentation helpers -----------------------------------------------------------------


def _safe_next(request: HttpRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False):
        return target
    return None


# --- pages -----------------------------------------------------------------------------------


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"kinds": QuestionKind.choices})


@require_http_methods(["GET", "POST"])
def register(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = RegisterForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        # The API's throttle and counter: every try counts, refused or not, as it does there.
        throttle = RegisterThrottle()
        if not throttle.allow_request(request, None):
            retry_after = math.ceil(throttle.wait() or 1)
            form.add_error(
                None,
                "Too many accounts were registered from your network in a short time. "
                f"Try again in {wait_in_words(retry_after)}.",
            )
            response = render(request, "register.html", {"form": form, "next": _safe_next(request)}, status=429)
            response["Retry-After"] = str(retry_after)
            return response
    if request.method == "POST" and form.is_valid():
        try:
            user, _token = user_register(username=form.cleaned_data["username"], password=form.cleaned_data["password"])
        except InvalidInput as exc:
            field = exc.extra.get("field")
            form.add_error(field if field in form.fields else None, exc.detail)
        else:
            login(request, user, backend="attempts.auth_backends.UsernameAnyCaseBackend")
            messages.success(request, f"Welcome, {user.username}. Pick a question or ask for one to practise.")
            return redirect(_safe_next(request) or "home")
    status = 400 if request.method == "POST" else 200
    return render(request, "register.html", {"form": form, "next": _safe_next(request)}, status=status)


def questions(request: HttpRequest) -> HttpResponse:
    form = QuestionSearchForm(request.GET)
    filters = form.filters()
    catalogue = question_catalogue(
        user=request.user, filters=filters, page_number=request.GET.get("page"), per_page=QUESTIONS_PER_PAGE
    )
    context = {
        "form": form,
        "filters": filters,
        "catalogue": catalogue,
        "page": catalogue.page,
        "topics_id": TOPIC_SUGGESTIONS_ID,
    }
    return render(request, "questions/list.html", context)


def _starters_view(question: Question) -> list[dict[str, Any]]:
    """A coding question's starter in each language it can be answered in, in the order of
    `LANGUAGES`, the default one first shown open; none for a prose question (its own
    `starter_code`, if any, is shown as it always was)."""
    starters = question_starter_codes(question=question)
    return [
        {
            "id": language_id,
            "name": language.name,
            "code": starters[language_id],
            "open": language_id == DEFAULT_LANGUAGE,
        }
        for language_id, language in LANGUAGES.items()
        if language_id in starters
    ]


def question_detail(request: HttpRequest, question_id: int) -> HttpResponse:
    try:
        question = question_get(question_id=question_id)
    except NotFound:
        raise Http404("No such question.") from None
    return render(
        request,
        "questions/detail.html",
        {
            "question": question,
            "examples": examples_view(question.examples),
            "starters": _starters_view(question),
            "current_attempt": (
                attempt_latest_for_question(user=request.user, question_id=question.pk)
                if request.user.is_authenticated
                else None
            ),
            # One key per button, so neither replays the other; no ids: the two forms share a page.
            "start_form": AttemptStartForm(initial={"idempotency_key": idempotency_key_new()}, auto_id=False),
            "fresh_form": AttemptStartForm(initial={"idempotency_key": idempotency_key_new()}, auto_id=False),
        },
    )


def _start(request: HttpRequest, question_id: int, start: Callable[..., Attempt]) -> HttpResponse:
    if request.method == "GET":
        # Reached after logging in from a "start" link: starting is a POST, so show the question.
        return redirect("question", question_id=question_id)
    form = AttemptStartForm(request.POST)
    try:
        if form.is_valid():
            # The button's form carries a key drawn with the page: a double click opens one attempt.
            def work() -> tuple[int, bytes]:
                attempt = start(user=request.user, question_id=question_id)
                return 303, reverse("attempt", kwargs={"attempt_id": attempt.pk}).encode()

            return redirect_once(request, form.cleaned_data["idempotency_key"], {}, work)
        attempt_id = start(user=request.user, question_id=question_id).pk
    except NotFound:
        raise Http404("No such question.") from None
    return redirect("attempt", attempt_id=attempt_id)


@login_required
@require_http_methods(["GET", "POST"])
def attempt_start(request: HttpRequest, question_id: int) -> HttpResponse:
    """The "Start practising" button: continue the most recent attempt on the question, or open one."""
    return _start(request, question_id, attempt_continue_or_create)


@login_required
@require_http_methods(["GET", "POST"])
def attempt_start_fresh(request: HttpRequest, question_id: int) -> HttpResponse:
    """The "Start a fresh attempt" button: a new attempt, whatever exists."""
    return _start(request, question_id, attempt_create)


@login_required
def attempts(request: HttpRequest) -> HttpResponse:
    attempts_of_user = attempt_list_for_user(user=request.user).select_related("question")
    page = Paginator(attempts_of_user, ATTEMPTS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {"attempt": row.attempt, "payload": row.payload, "percent": _percent_of(row.payload), "record": row.record}
        for row in attempt_rows(user=request.user, attempts=list(page.object_list))
    ]
    return render(request, "attempts/list.html", {"page": page, "rows": rows})


def _percent_of(payload: dict[str, Any]) -> float | None:
    result = payload.get("result")
    return percent(result["score"], result["max_score"]) if result else None


@login_required
@require_http_methods(["GET", "POST"])
def practice_request_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        initial = {name: request.GET.get(name, "") for name in ("kind", "difficulty", "topic")}
        form = PracticeRequestForm(initial={**initial, "idempotency_key": idempotency_key_new()})
        return render(request, "practice/new.html", {"form": form})
    form = PracticeRequestForm(request.POST)
    if form.is_valid():
        filters = {name: form.cleaned_data[name] for name in ("kind", "difficulty", "topic") if form.cleaned_data[name]}
        key = form.cleaned_data["idempotency_key"]

        def work() -> tuple[int, bytes]:
            practice = practice_request_create(user=request.user, **filters, correlation_id=key)
            return 303, reverse("practice_request", kwargs={"practice_request_id": practice.pk}).encode()

        try:
            return redirect_once(request, key, filters, work)
        except IdempotencyKeyReused:
            form = PracticeRequestForm(initial={**filters, "idempotency_key": idempotency_key_new()})
            error = (
                "This form had already been used for a different request, so nothing new was asked. "
                "Check the choices below and send it again."
            )
            return render(request, "practice/new.html", {"form": form, "error": error}, status=422)
        except InvalidInput as exc:
            field = exc.extra.get("field")
            form.add_error(field if field in form.fields else None, exc.detail)
    return render(request, "practice/new.html", {"form": form}, status=400)


@login_required
def practice_request_detail(request: HttpRequest, practice_request_id: int) -> HttpResponse:
    try:
        practice = practice_request_get_for_user(user=request.user, practice_request_id=practice_request_id)
    except NotFound:
        raise Http404("No such practice request.") from None
    context = {
        "practice": practice,
        "pending": practice.status in PENDING_PRACTICE,
        "refresh_seconds": REFRESH_SECONDS,
    }
    return render(request, "practice/detail.html", context)
