"""The text of a graded answer, for the page that quotes it back with its evidence marked."""

from __future__ import annotations

from typing import Any

from attempts.models import Submission


def submission_answer_for_user(*, user: Any, submission_id: int) -> str | None:
    """The answer of one of `user`'s submissions; None for another user's or a missing one."""
    return Submission.objects.filter(pk=submission_id, attempt__user=user).values_list("answer", flat=True).first()
