"""Mock interviews: a timed session of a few questions, whose deadline the server enforces.

The deadline is checked in one place, `mock_deadline_check`, which the submit service calls
under the attempt's row lock before it writes anything. Runs and draft saves stay open after
the deadline: they score nothing and change no attempt's state, and the draft is how "the
answer is kept" when a late submit is refused.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from attempts.models import Attempt, Difficulty, MockInterview, QuestionKind
from attempts.selectors.questions import question_choose_for_practice
from interviewprep.errors import InvalidInput

MOCK_DEFAULT_MINUTES = 45
MOCK_MIN_MINUTES = 1
MOCK_MAX_MINUTES = 180
MOCK_DEFAULT_KINDS = (QuestionKind.CODING.value, QuestionKind.BEHAVIORAL.value)
# More questions than this is no interview the candidate can finish in the time allowed.
MOCK_MAX_QUESTIONS = 5


class DeadlinePassed(InvalidInput):
    """A submit after a mock interview's deadline: 409 under /api/v1/. An InvalidInput, so a
    page that refuses input shows its words and keeps the typed answer."""

    status_code = 409
    code = "deadline-passed"


class NoQuestionOfKind(InvalidInput):
    """The bank has no active question of a kind asked for: 409, the request is right but the
    bank cannot meet it. An InvalidInput, so the start page shows its words."""

    status_code = 409
    code = "no-question"


def mock_interview_validate(*, duration_minutes: Any, kinds: Any, difficulty: Any) -> tuple[int, list[str], str]:
    """(minutes, kinds in order, difficulty or "") with the defaults filled in; InvalidInput
    saying what is wrong otherwise."""
    minutes = MOCK_DEFAULT_MINUTES if duration_minutes is None else duration_minutes
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not MOCK_MIN_MINUTES <= minutes <= MOCK_MAX_MINUTES:
        raise InvalidInput(
            f"duration_minutes must be a whole number of minutes from {MOCK_MIN_MINUTES} to {MOCK_MAX_MINUTES}.",
            field="duration_minutes",
        )
    chosen = list(MOCK_DEFAULT_KINDS) if kinds is None else kinds
    if not isinstance(chosen, list) or not 1 <= len(chosen) <= MOCK_MAX_QUESTIONS:
        raise InvalidInput(f"kinds must be a list of 1 to {MOCK_MAX_QUESTIONS} question kinds.", field="kinds")
    unknown = [kind for kind in chosen if kind not in QuestionKind.values]
    if unknown:
        raise InvalidInput(
            f"kinds may only hold {', '.join(QuestionKind.values)}; {unknown[0]!r} is not one.", field="kinds"
        )
    level = difficulty or ""
    if level and level not in Difficulty.values:
        raise InvalidInput(f"difficulty must be one of {', '.join(Difficulty.values)}.", field="difficulty")
    return minutes, chosen, level


def mock_interview_create(
    *,
    user,
    duration_minutes: Any = None,
    kinds: Any = None,
    difficulty: Any = None,
    now: datetime | None = None,
) -> MockInterview:
    """A session starting `now`, with one draft attempt per kind, in one transaction. Each
    question is chosen as a practice request chooses one (the difficulty asked for, else the
    nearest; one not practised first), so two questions of one kind differ: the first one's
    attempt already counts as practised when the second is chosen."""
    minutes, chosen, level = mock_interview_validate(
        duration_minutes=duration_minutes, kinds=kinds, difficulty=difficulty
    )
    started_at = now or timezone.now()
    with transaction.atomic():
        interview = MockInterview.objects.create(
            user=user,
            duration_minutes=minutes,
            kinds=chosen,
            difficulty=level,
            started_at=started_at,
            deadline=started_at + timedelta(minutes=minutes),
        )
        for kind in chosen:
            question, note = question_choose_for_practice(user=user, kind=kind, difficulty=level or None)
            if question is None:
                # Rolls the session back: a mock interview is all of its questions or none.
                raise NoQuestionOfKind(f"{note} Choose other kinds for the mock interview.", field="kinds")
            Attempt.objects.create(user=user, question=question, mock_interview=interview)
    return interview


def mock_deadline_check(*, attempt: Attempt, now: datetime | None = None) -> None:
    """Refuse (DeadlinePassed) a submit to an attempt of a mock interview whose deadline has
    come. Free for an attempt of no mock interview; one indexed read for the others."""
    if attempt.mock_interview_id is None:
        return
    deadline = MockInterview.objects.filter(pk=attempt.mock_interview_id).values_list("deadline", flat=True).first()
    if deadline is None or (now or timezone.now()) < deadline:
        return
    raise DeadlinePassed(
        f"Time is up: this mock interview ended at {deadline:%H:%M} UTC, so the answer was not submitted. "
        "Your answer is kept as a draft.",
        deadline=deadline.isoformat(),
        mock_interview_id=attempt.mock_interview_id,
    )
