import signal
import threading

from django.core.management.base import BaseCommand

from evaluation.jobs.outbox import outbox_publish
from evaluation.jobs.relay import outbox_relay_loop


class Command(BaseCommand):
    help = (
        "Publish outbox rows to the broker as their transactions commit, and retries as they come due;"
        " send stuck jobs again every SWEEP_INTERVAL."
    )
    # A long-running process, restarted by its supervisor: the release step's migrate ran the
    # system checks already, and each start would spend half a second of CPU on them again.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--interval", type=float, default=1.0, help="longest sleep between passes, in seconds")
        parser.add_argument("--once", action="store_true", help="one pass, then exit")

    def handle(self, *args, interval: float, once: bool, **options):
        if once:
            self.stdout.write(f"published {outbox_publish()}")
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        outbox_relay_loop(interval=interval, stop=stop)
