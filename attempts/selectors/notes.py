"""Reads of the candidate's private notes."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from attempts.models import Note, Question
from interviewprep.errors import NotFound


def note_payload(*, question_id: int, note: Note | None) -> dict[str, Any]:
    return {
        "question_id": question_id,
        "text": note.text if note else "",
        "updated_at": note.updated_at.isoformat() if note else None,
    }


def note_get_for_user(*, user, question_id: int) -> dict[str, Any]:
    """The user's note on an active question: an empty text when there is none yet."""
    if not Question.objects.filter(pk=question_id, is_active=True).exists():
        raise NotFound(f"There is no question {question_id}.")
    return note_payload(question_id=question_id, note=Note.objects.filter(user=user, question_id=question_id).first())


def note_text_for_user(*, user, question_id: int) -> str:
    return Note.objects.filter(user=user, question_id=question_id).values_list("text", flat=True).first() or ""


def note_list_for_user(*, user) -> QuerySet[Note]:
    """Every note of the user's with something in it, the latest written first."""
    return Note.objects.filter(user=user).exclude(text="").select_related("question").order_by("-updated_at", "-id")
