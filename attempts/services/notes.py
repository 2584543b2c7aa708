"""The candidate's private note on a question: one per question, written whole each time."""

from __future__ import annotations

from typing import Any

from attempts.models import Note, Question
from interviewprep.errors import InvalidInput, NotFound

# A note is a few lines to come back to, not a second answer.
NOTE_MAX_CHARS = 10_000


def note_text_validate(text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string.", field="text")
    if len(text) > NOTE_MAX_CHARS:
        raise InvalidInput(
            f"A note holds at most {NOTE_MAX_CHARS:,} characters; this one has {len(text):,}.", field="text"
        )
    return text


def note_save(*, user, question_id: int, text: Any) -> Note:
    """Keep `text` as the user's note on the question (an empty text keeps an empty note). One
    row per user and question, enforced by the database: two saves at once leave one note, the
    later text."""
    note_text_validate(text)
    if not Question.objects.filter(pk=question_id, is_active=True).exists():
        raise NotFound(f"There is no question {question_id}.")
    note, _ = Note.objects.update_or_create(user=user, question_id=question_id, defaults={"text": text})
    return note
