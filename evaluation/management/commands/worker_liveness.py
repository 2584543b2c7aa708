from django.core.management.base import BaseCommand, CommandError

from evaluation.jobs.liveness import workers_state
from evaluation.jobs.queue_depths import queue_depths


class Command(BaseCommand):
    help = (
        "A supervisor's liveness probe for one Celery worker: exit 0 while the worker named by its"
        " --hostname reports and consumes, 1 when it is silent or has stalled (restart it then)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--hostname", required=True, help="the worker's Celery node name, as given to --hostname")

    def handle(self, *args, hostname: str, **options):
        mine = [w for w in workers_state(depths=queue_depths()) if w.name.rsplit(":", 1)[0] == hostname]
        if not mine:
            raise CommandError(f"{hostname}: no report within WORKER_STALL_AFTER (not started, hung or gone)")
        stalled = [w for w in mine if w.stalled]
        if stalled:
            raise CommandError("; ".join(f"{w.name} {w.describe()}" for w in stalled))
        self.stdout.write("; ".join(f"{w.name} ok" for w in mine))
