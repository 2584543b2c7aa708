import collections
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db.models import F

from attempts.models import Attempt, PracticeRequest, Question, Result, Submission


def attempts_state() -> dict[str, list[dict]]:
    """The active questions and every row of the candidates' work, each list ordered by id."""
    users = get_user_model().objects.filter(is_staff=False)
    return {
        "questions": list(
            Question.objects.filter(is_active=True).order_by("id").values("id", "slug", "kind", "evaluator")
        ),
        "users": list(users.order_by("id").values("id", "username")),
        "attempts": list(
            Attempt.objects.order_by("id").values("id", "user_id", "status", "version", "latest_submission_id")
        ),
        "submissions": list(
            Submission.objects.order_by("id").values(
                "id", "attempt_id", "idempotency_key", "status", user_id=F("attempt__user_id")
            )
        ),
        "results": list(Result.objects.order_by("id").values("submission_id", "score", "max_score", "details")),
        "practice": list(PracticeRequest.objects.order_by("id").values("id", "user_id", "status", "attempt_id")),
    }


class Command(BaseCommand):
    help = (
        "Every attempt, submission, result and practice request, the candidates and the active questions:"
        " their counts, or (--json) the rows, for reading a test or drill database back."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the rows as one JSON object")

    def handle(self, *args, as_json: bool, **options):
        state = attempts_state()
        if as_json:
            self.stdout.write(json.dumps(state, default=str, separators=(",", ":")))
            return
        for name, rows in state.items():
            statuses = collections.Counter(row["status"] for row in rows if "status" in row)
            detail = f" ({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))})" if statuses else ""
            self.stdout.write(f"{name}: {len(rows)}{detail}")
