import json
import uuid

from attempts.services.attempts import submission_create
from evaluation.models import EvaluationJob


def submit_via_service(attempt, answer: str) -> tuple[int, int]:
    """A submit through the service, as the API makes it: (submission id, its job id)."""
    stored = submission_create(
        user=attempt.user,
        attempt_id=attempt.pk,
        answer=answer,
        idempotency_key=uuid.uuid4().hex,
        fingerprint=uuid.uuid4().hex,
    )
    submission_id = json.loads(stored.body)["submission_id"]
    return submission_id, EvaluationJob.objects.get(submission_id=submission_id).pk
