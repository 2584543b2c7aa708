import collections
import json

from django.core.management.base import BaseCommand

from evaluation.models import DeadLetter, EvaluationJob, Outbox


def jobs_state() -> dict:
    """Every job and dead letter, ordered by id, and how many outbox rows wait to be published."""
    return {
        "jobs": list(
            EvaluationJob.objects.order_by("id").values(
                "id", "kind", "subject_id", "status", "tries", "max_tries", "heartbeat_at", "last_error"
            )
        ),
        "dead_letters": list(DeadLetter.objects.order_by("id").values("job_id", "error")),
        "outbox_unpublished": Outbox.objects.filter(published_at__isnull=True).count(),
    }


class Command(BaseCommand):
    help = (
        "Every job and dead letter and the unpublished outbox rows: their counts, or (--json) the rows,"
        " for reading a test or drill database back."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the rows as one JSON object")

    def handle(self, *args, as_json: bool, **options):
        state = jobs_state()
        if as_json:
            self.stdout.write(json.dumps(state, default=str, separators=(",", ":")))
            return
        statuses = collections.Counter(job["status"] for job in state["jobs"])
        self.stdout.write(f"jobs: {len(state['jobs'])} ({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))})")
        self.stdout.write(f"dead letters: {len(state['dead_letters'])}")
        self.stdout.write(f"outbox unpublished: {state['outbox_unpublished']}")
