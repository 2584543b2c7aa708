"""The home page's "N due for review": the beat task's count, so the page replays no history."""

from __future__ import annotations

from typing import Any

from django import template

from attempts.selectors.reviews import review_due_count_for_user

register = template.Library()


@register.inclusion_tag("review/_due_notice.html", takes_context=True)
def review_due_notice(context: dict[str, Any]) -> dict[str, Any]:
    user = context["request"].user
    return {"due": review_due_count_for_user(user_id=user.pk) if user.is_authenticated else 0}
