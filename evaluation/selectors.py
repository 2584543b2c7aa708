from django.db.models import QuerySet

from evaluation.models import DeadLetter


def dead_letter_list() -> QuerySet[DeadLetter]:
    return DeadLetter.objects.order_by("-created_at", "-id")
