"""Server-rendered pages. Each view adapts, as the API classes do: a Form in, one service (or
selector) call, a template out. Every refusal of a service becomes a message on the same page,
with the candidate's text kept."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from attempts.forms import (
    AttemptStartForm,
    PracticeRequestForm,
    QuestionFilterForm,
    RegisterForm,
    SubmissionForm,
    idempotency_key_new,
)
from attempts.models import AttemptStatus, PracticeRequestStatus, Question, QuestionKind, SubmissionStatus
from attempts.selectors.attempts import (
    attempt_get_for_user,
    attempt_list_for_user,
    attempt_payloads,
    practice_request_get_for_user,
    submission_list_for_attempt,
    submission_payloads,
)
from attempts.selectors.questions import question_get, question_list
from attempts.services.accounts import user_register
from attempts.services.attempts import attempt_create, submission_create
from attempts.services.idempotency import idempotent, request_fingerprint
from attempts.services.practice import practice_request_create
from attempts.throttles import RegisterThrottle, wait_in_words
from interviewprep.errors import AnswerTooLarge, IdempotencyKeyReused, InvalidInput, NotFound, Overloaded

QUESTIONS_PER_PAGE = 20
ATTEMPTS_PER_PAGE = 20
SUBMISSIONS_PER_PAGE = 10
# The attempt page (and the practice status page) redraws itself this often while work is pending.
REFRESH_SECONDS = 2
PENDING_ATTEMPT = (AttemptStatus.QUEUED, AttemptStatus.PROCESSING)
PENDING_PRACTICE = (PracticeRequestStatus.QUEUED, PracticeRequestStatus.PROCESSING)

TEST_STATUS_WORDS = {
    "passed": "Passed",
    "wrong_answer": "Wrong answer",
    "runtime_error": "Runtime error",
    "time_limit": "Time limit",
    "memory_limit": "Memory limit",
    "output_limit": "Output limit",
}


# --- presentation helpers -----------------------------------------------------------------


def _int_or_none(raw: str | None) -> int | None:
    try:
        value = int(raw or "")
    except ValueError:
        return None
    return value if value >= 0 else None


def _safe_next(request: HttpRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False):
        return target
    return None


def _examples_view(examples: Any) -> list[list[tuple[str, str]]]:
    """Examples as (label, text) rows: the bank writes {input, output, explanation?}, but
    anything else it may hold is shown as text rather than dropped or rendered as markup."""
    if not isinstance(examples, list):
        return []
    order = {"input": 0, "output": 1, "explanation": 2}
    rows = []
    for example in examples:
        if isinstance(example, dict):
            items = sorted(example.items(), key=lambda item: order.get(item[0], len(order)))
            rows.append([(str(key).replace("_", " ").capitalize(), _as_text(value)) for key, value in items])
        else:
            rows.append([("Example", _as_text(example))])
    return rows


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def _percent(score: Any, max_score: Any) -> float | None:
    try:
        return max(0.0, min(100.0, float(score) / float(max_score) * 100))
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _result_view(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The latest result, shaped for the template: per-test rows (coding), per-criterion rows
    (rubrics) and any other detail as plain label/value pairs, so a new evaluator's details
    still show without a template change."""
    if result is None:
        return None
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    tests = []
    for row in details.get("tests") or []:
        if not isinstance(row, dict):
            continue
        status = str(row.get("status", ""))
        tests.append(
            {
                "name": _as_text(row.get("name", "")),
                "status": status,
                "status_label": TEST_STATUS_WORDS.get(status, status.replace("_", " ").capitalize()),
                "passed": status == "passed",
                "time_ms": row.get("time_ms"),
                "output": _as_text(row.get("output") or ""),
            }
        )
    criteria = []
    for row in details.get("criteria") or []:
        if not isinstance(row, dict):
            continue
        score = row.get("score")
        met = row.get("met")
        if met is None and isinstance(score, int | float):
            met = score >= 1
        criteria.append(
            {
                "title": _as_text(row.get("title") or row.get("id") or "Criterion"),
                "weight": row.get("weight"),
                "percent": _percent(score, 1) if isinstance(score, int | float) else None,
                "met": met,
                "found": [_as_text(x) for x in row.get("found") or []],
                "missing": [_as_text(x) for x in row.get("missing") or []],
                "explanation": _as_text(row.get("explanation") or ""),
            }
        )
    others = [
        (key.replace("_", " ").capitalize(), _as_text(value))
        for key, value in details.items()
        if key not in ("tests", "criteria") and value not in (None, "", [], {})
    ]
    return {
        "score": result.get("score"),
        "max_score": result.get("max_score"),
        "percent": _percent(result.get("score"), result.get("max_score")),
        "feedback": result.get("feedback") or "",
        "tests": tests,
        "tests_passed": sum(1 for t in tests if t["passed"]),
        "criteria": criteria,
        "others": others,
    }


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
    form = QuestionFilterForm(request.GET)
    filters = form.filters()
    page = Paginator(question_list(**filters), QUESTIONS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "questions/list.html", {"form": form, "filters": filters, "page": page})


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
            "examples": _examples_view(question.examples),
            "start_form": AttemptStartForm(initial={"idempotency_key": idempotency_key_new()}),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def attempt_start(request: HttpRequest, question_id: int) -> HttpResponse:
    if request.method == "GET":
        # Reached after logging in from a "start" link: starting is a POST, so show the question.
        return redirect("question", question_id=question_id)
    form = AttemptStartForm(request.POST)
    try:
        if form.is_valid():
            # The button's form carries a key drawn with the page: a double click opens one attempt.
            def work() -> tuple[int, bytes]:
                attempt = attempt_create(user=request.user, question_id=question_id)
                return 303, reverse("attempt", kwargs={"attempt_id": attempt.pk}).encode()

            return _redirect_once(request, form.cleaned_data["idempotency_key"], {}, work)
        attempt_id = attempt_create(user=request.user, question_id=question_id).pk
    except NotFound:
        raise Http404("No such question.") from None
    return redirect("attempt", attempt_id=attempt_id)


def _redirect_once(request: HttpRequest, key: str, data: dict, work) -> HttpResponse:
    """A form post under its key: `work` once, and every repeat redirected where the first went."""
    stored = idempotent(
        user_id=request.user.pk,
        key=key,
        fingerprint=request_fingerprint(method="POST", path=request.path, data=data),
        work=work,
    )
    return redirect(stored.body.decode())


@login_required
def attempts(request: HttpRequest) -> HttpResponse:
    attempts_of_user = attempt_list_for_user(user=request.user).select_related("question")
    page = Paginator(attempts_of_user, ATTEMPTS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {"attempt": attempt, "payload": payload, "percent": _percent_of(payload)}
        for attempt, payload in zip(page.object_list, attempt_payloads(list(page.object_list)), strict=True)
    ]
    return render(request, "attempts/list.html", {"page": page, "rows": rows})


def _percent_of(payload: dict[str, Any]) -> float | None:
    result = payload.get("result")
    return _percent(result["score"], result["max_score"]) if result else None


@login_required
@require_http_methods(["GET", "POST"])
def attempt_detail(request: HttpRequest, attempt_id: int) -> HttpResponse:
    if request.method == "POST":
        return _attempt_submit(request, attempt_id)
    return _attempt_page(request, attempt_id, min_version=_int_or_none(request.GET.get("v")))


def _attempt_submit(request: HttpRequest, attempt_id: int) -> HttpResponse:
    form = SubmissionForm(request.POST)
    if not form.is_valid():
        # Only the hidden key can fail here (a tampered or truncated form); keep the text.
        answer = str(form.data.get("answer", "")).replace("\r\n", "\n")
        return _attempt_page(
            request,
            attempt_id,
            answer=answer,
            key=idempotency_key_new(),
            status=400,
            error="The form was incomplete, so nothing was submitted. Your answer is kept below: submit it again.",
        )
    answer = form.cleaned_data["answer"]
    key = form.cleaned_data["idempotency_key"]

    def work() -> tuple[int, bytes]:
        submission = submission_create(user=request.user, attempt_id=attempt_id, answer=answer, correlation_id=key)
        url = reverse("attempt", kwargs={"attempt_id": attempt_id})
        return 303, f"{url}?v={submission.attempt.version}".encode()

    try:
        response = _redirect_once(request, key, {"answer": answer}, work)
    except NotFound:
        raise Http404("No such attempt.") from None
    except Overloaded as exc:
        retry_after = exc.extra.get("retry_after") or exc.headers.get("Retry-After")
        response = _attempt_page(
            request,
            attempt_id,
            answer=answer,
            key=key,  # nothing was stored under it, so the same key may try again
            status=503,
            error=(
                f"Evaluation is busy right now, so your answer was not submitted. "
                f"Your text is kept below: please try again in {retry_after} seconds."
            ),
        )
        response["Retry-After"] = str(retry_after)
        return response
    except AnswerTooLarge as exc:
        return _attempt_page(request, attempt_id, answer=answer, key=key, status=413, error=exc.detail)
    except IdempotencyKeyReused:
        return _attempt_page(
            request,
            attempt_id,
            answer=answer,
            key=idempotency_key_new(),
            status=422,
            error=(
                "This form had already been used to submit a different answer (perhaps from an older "
                "page), so nothing new was submitted. Your text is kept below: submit it again to send it."
            ),
        )
    except InvalidInput as exc:
        message = "Write an answer before submitting." if exc.extra.get("field") == "answer" else exc.detail
        return _attempt_page(request, attempt_id, answer=answer, key=key, status=400, error=message)
    messages.success(request, "Your answer was submitted and is being evaluated.")
    return response


def _attempt_question(question_id: int) -> Question | None:
    # A retired question is "not found" to question_get; its attempts still open, without it.
    try:
        return question_get(question_id=question_id)
    except NotFound:
        return None


def _attempt_page(
    request: HttpRequest,
    attempt_id: int,
    *,
    min_version: int | None = None,
    answer: str | None = None,
    key: str | None = None,
    status: int = 200,
    error: str | None = None,
) -> HttpResponse:
    try:
        attempt = attempt_get_for_user(user=request.user, attempt_id=attempt_id, min_version=min_version)
        submissions = submission_list_for_attempt(user=request.user, attempt_id=attempt_id)
    except NotFound:
        raise Http404("No such attempt.") from None
    question = _attempt_question(attempt["question_id"])
    page = Paginator(submissions, SUBMISSIONS_PER_PAGE).get_page(request.GET.get("page"))
    if answer is None:
        newest = submissions.first()
        answer = newest.answer if newest is not None else (question.starter_code if question else "")
    form = SubmissionForm(initial={"answer": answer, "idempotency_key": key or idempotency_key_new()})
    pending = attempt["status"] in PENDING_ATTEMPT
    context = {
        "attempt": attempt,
        "status_label": AttemptStatus(attempt["status"]).label,
        "question": question,
        "examples": _examples_view(question.examples) if question else [],
        "result": _result_view(attempt["result"]),
        "submissions": [
            {
                **payload,
                "status_label": SubmissionStatus(payload["status"]).label,
                "created": datetime.fromisoformat(payload["created_at"]),
            }
            for payload in submission_payloads(list(page.object_list))
        ],
        "page": page,
        "form": form,
        "error": error,
        "pending": pending,
        "refresh_seconds": REFRESH_SECONDS,
        "max_bytes": settings.ANSWER_MAX_BYTES,
    }
    return render(request, "attempts/detail.html", context, status=status)


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
            return _redirect_once(request, key, filters, work)
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
