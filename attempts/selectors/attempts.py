"""Reads of attempts and submissions, shaped as the API and the pages show them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from attempts.cache import attempt_cached
from attempts.models import Attempt, AttemptStatus, PracticeRequest, Result, Submission
from attempts.selectors.history import QuestionRecord, question_records_for_user
from attempts.selectors.payloads import attempt_payload, attempt_shown, result_payload
from attempts.services.attempts import EVALUATE
from evaluation.jobs import job_queue_position
from evaluation.languages import DEFAULT_LANGUAGE
from interviewprep.errors import NotFound


def attempt_get_for_user(*, user, attempt_id: int, min_version: int | None = None) -> dict[str, Any]:
    """One attempt of this user, as the API shows it. Another user's attempt is 'not found',
    indistinguishable from a missing one. A queued attempt also says where it stands."""
    payload = attempt_cached(attempt_id=attempt_id, min_version=min_version)
    if payload is None or payload.get("user_id") != user.pk:
        raise NotFound(f"There is no attempt {attempt_id}.")
    (shown,) = attempt_shown([payload])
    if shown["status"] == AttemptStatus.QUEUED and shown["latest_submission_id"] is not None:
        # Read after the cache, never stored in it: it changes with every job that starts.
        shown["queue"] = submission_queue(submission_id=shown["latest_submission_id"])
    return shown


def submission_queue(*, submission_id: int) -> dict[str, int | None]:
    """Where the submission's evaluation stands: `{"position", "estimated_seconds"}`, either
    None when unknown (no job waiting, or no recent run to learn from)."""
    queue = job_queue_position(kind=EVALUATE, subject_id=submission_id)
    return {"position": queue.position, "estimated_seconds": queue.estimated_seconds}


def attempt_list_for_user(*, user) -> QuerySet[Attempt]:
    return Attempt.objects.filter(user=user).order_by("-created_at", "-id")


def attempt_payloads(attempts: list[Attempt]) -> list[dict[str, Any]]:
    latest_ids = [a.latest_submission_id for a in attempts if a.latest_submission_id]
    results = {r.submission_id: r for r in Result.objects.filter(submission_id__in=latest_ids)}
    return attempt_shown([attempt_payload(a, results.get(a.latest_submission_id)) for a in attempts])


@dataclass(frozen=True)
class AttemptRow:
    """A line of "My attempts": the attempt, its latest result, and the question's record."""

    attempt: Attempt
    payload: dict[str, Any]
    record: QuestionRecord | None  # the best and last score over every attempt at the question


def attempt_rows(*, user, attempts: list[Attempt]) -> list[AttemptRow]:
    """The attempts with their payloads and their questions' records, in one read of each."""
    records = question_records_for_user(user_id=user.pk, question_ids={a.question_id for a in attempts})
    return [
        AttemptRow(attempt, payload, records.get(attempt.question_id))
        for attempt, payload in zip(attempts, attempt_payloads(attempts), strict=True)
    ]


def submission_payload(submission: Submission, result: Result | None) -> dict[str, Any]:
    return {
        "id": submission.pk,
        "attempt_id": submission.attempt_id,
        "answer": submission.answer,
        "language": submission.language,
        "status": submission.status,
        "created_at": submission.created_at.isoformat(),
        "result": result_payload(result),
    }


def submission_list_for_attempt(*, user, attempt_id: int) -> QuerySet[Submission]:
    if not Attempt.objects.filter(pk=attempt_id, user=user).exists():
        raise NotFound(f"There is no attempt {attempt_id}.")
    return Submission.objects.filter(attempt_id=attempt_id).select_related("result").order_by("-created_at", "-id")


def submission_payloads(submissions: list[Submission]) -> list[dict[str, Any]]:
    return [submission_payload(s, getattr(s, "result", None)) for s in submissions]


def submission_get_for_user(*, user, submission_id: int) -> dict[str, Any]:
    submission = Submission.objects.select_related("result").filter(pk=submission_id, attempt__user=user).first()
    if submission is None:
        raise NotFound(f"There is no submission {submission_id}.")
    return submission_payload(submission, getattr(submission, "result", None))


@dataclass(frozen=True)
class SubmissionRecord:
    """One submission of the user's with what its page names: the question and whether it is
    its attempt's latest."""

    payload: dict[str, Any]  # as `GET /api/v1/submissions/{id}/` answers it
    question_id: int
    question_title: str
    latest: bool


def submission_record_for_user(*, user, submission_id: int) -> SubmissionRecord:
    submission = (
        Submission.objects.select_related("result", "attempt__question")
        .filter(pk=submission_id, attempt__user=user)
        .first()
    )
    if submission is None:
        raise NotFound(f"There is no submission {submission_id}.")
    attempt = submission.attempt
    return SubmissionRecord(
        payload=submission_payload(submission, getattr(submission, "result", None)),
        question_id=attempt.question_id,
        question_title=attempt.question.title,
        latest=attempt.latest_submission_id == submission.pk,
    )


@dataclass(frozen=True)
class SubmissionChoice:
    id: int
    created_at: datetime
    status: str
    score: float | None  # None until scored, and for a not-scored result
    max_score: float | None


@dataclass(frozen=True)
class SubmissionPair:
    """Two submissions of one attempt to compare, and every submission to choose from."""

    choices: list[SubmissionChoice]  # newest first
    old: SubmissionChoice | None
    new: SubmissionChoice | None
    old_answer: str
    new_answer: str
    found: bool  # False when an id asked for is no submission of the attempt


def submission_pair_for_user(
    *, user, attempt_id: int, old_id: int | None = None, new_id: int | None = None
) -> SubmissionPair:
    """Two submissions of the user's attempt: those asked for, else the latest and the one
    submitted just before it. The answers of the two alone are read."""
    if not Attempt.objects.filter(pk=attempt_id, user=user).exists():
        raise NotFound(f"There is no attempt {attempt_id}.")
    rows = (
        Submission.objects.filter(attempt_id=attempt_id)
        .order_by("-created_at", "-id")
        .values_list("id", "created_at", "status", "result__score", "result__max_score")
    )
    choices = [SubmissionChoice(*row) for row in rows]
    by_id = {choice.id: choice for choice in choices}
    new = by_id.get(new_id) if new_id is not None else (choices[0] if choices else None)
    # Without an older one asked for, the one submitted just before the newer.
    before = choices[choices.index(new) + 1 :] if new in choices else []
    old = by_id.get(old_id) if old_id is not None else (before[0] if before else None)
    found = (old_id is None or old is not None) and (new_id is None or new is not None)
    if not found:
        old = new = None
    answers = dict(Submission.objects.filter(pk__in=[c.id for c in (old, new) if c]).values_list("id", "answer"))
    return SubmissionPair(
        choices=choices,
        old=old,
        new=new,
        old_answer=answers.get(old.id, "") if old else "",
        new_answer=answers.get(new.id, "") if new else "",
        found=found,
    )


def practice_request_get_for_user(*, user, practice_request_id: int) -> PracticeRequest:
    request = PracticeRequest.objects.filter(pk=practice_request_id, user=user).first()
    if request is None:
        raise NotFound(f"There is no practice request {practice_request_id}.")
    return request


def _saved_at(attempt: Attempt) -> str | None:
    return attempt.draft_saved_at.isoformat() if attempt.draft_saved_at else None


def attempt_draft_get_for_user(*, user, attempt_id: int) -> dict[str, Any]:
    """What this user was typing for the attempt: the draft of its language ("" when none), every
    language's draft, and when one was last saved (None when there is none)."""
    attempt = Attempt.objects.filter(pk=attempt_id, user=user).only("language", "drafts", "draft_saved_at").first()
    if attempt is None:
        raise NotFound(f"There is no attempt {attempt_id}.")
    return {
        "language": attempt.language,
        "answer": attempt.drafts.get(attempt.language, ""),
        "answers": dict(attempt.drafts),
        "saved_at": _saved_at(attempt),
    }


def attempt_draft_saved_payload(attempt: Attempt) -> dict[str, Any]:
    return {"language": attempt.language, "saved_at": _saved_at(attempt)}


@dataclass(frozen=True)
class EditorTexts:
    language: str  # the language the editor opens in
    texts: dict[str, str]  # the text each language opens with when it has one of its own
    saved_at: datetime | None  # when the opening text was saved as a draft, None when it is not one


def attempt_editor_texts_for_user(*, user, attempt_id: int, starters: dict[str, str]) -> EditorTexts:
    """What the editor opens with, in one read. The opening language's text is the saved draft
    of the attempt's language when it is newer than the latest submission (it follows the
    candidate to another device), else that submission's answer, in its language; every other
    language of `starters` opens on its draft, and one without a draft on its starter (the page's
    part). A language the question has no starter for (one stored before signatures) gives way
    to Python's, or the first."""
    attempt = (
        Attempt.objects.filter(pk=attempt_id, user=user)
        .select_related("latest_submission")
        .only(
            "language",
            "drafts",
            "draft_saved_at",
            "latest_submission__answer",
            "latest_submission__language",
            "latest_submission__created_at",
        )
        .first()
    )
    if attempt is None:
        raise NotFound(f"There is no attempt {attempt_id}.")
    texts = {language: text for language, text in attempt.drafts.items() if text and language in starters}
    latest = attempt.latest_submission
    language, saved_at = attempt.language, None
    draft = attempt.drafts.get(attempt.language)
    if (
        draft is not None
        and attempt.draft_saved_at is not None
        and (latest is None or attempt.draft_saved_at > latest.created_at)
    ):
        texts[language], saved_at = draft, attempt.draft_saved_at
    elif latest is not None:
        language = latest.language
        texts[language] = latest.answer
    if starters and language not in starters:
        language = DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in starters else next(iter(starters))
    return EditorTexts(language, texts, saved_at)
