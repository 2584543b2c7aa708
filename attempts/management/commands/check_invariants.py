import json

from django.core.management.base import BaseCommand

from attempts.services.invariants import invariants_check_record


class Command(BaseCommand):
    help = "Check the promises on live data; print the rows that break one and exit non-zero."

    def add_arguments(self, parser):
        parser.add_argument(
            "--outbox-bound", type=float, default=60.0, help="seconds an outbox row may stay unpublished once due"
        )

    def handle(self, *args, outbox_bound: float, **options):
        violations = invariants_check_record(outbox_bound_seconds=outbox_bound)
        if not violations:
            self.stdout.write("all invariants hold")
            return
        for violation in violations:
            self.stdout.write(f"BROKEN {violation.check}: {violation.description}")
            for row in violation.rows:
                self.stdout.write("  " + json.dumps(row, default=str))
        raise SystemExit(1)
