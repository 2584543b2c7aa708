"""Template tags of the practice aids shown inside other pages (the note box)."""

from __future__ import annotations

from datetime import datetime

from django import template

from attempts.selectors.notes import note_text_for_user

register = template.Library()


@register.simple_tag(takes_context=True)
def note_text(context: template.Context, question_id: int) -> str:
    """The signed-in candidate's note on the question ("" when none), for the note box."""
    user = context["request"].user
    if not user.is_authenticated:
        return ""
    return note_text_for_user(user=user, question_id=question_id)


@register.filter
def as_datetime(value: str) -> datetime | None:
    """An ISO 8601 time of a payload, as a datetime the `date` filter can show in the page's zone."""
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
