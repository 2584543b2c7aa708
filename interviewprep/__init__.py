import contextlib
import os
import tempfile
import zlib
from pathlib import Path


def _default_metrics_dir() -> str:
    # One per user and checkout: processes started by hand find each other's counts, and never
    # those of another checkout's.
    checkout = zlib.crc32(os.fsencode(Path(__file__).resolve().parent))
    return os.path.join(tempfile.gettempdir(), f"interviewprep-metrics-{os.getuid()}-{checkout:08x}")


# prometheus_client picks multiprocess mode when it is first imported, and every process (web,
# workers and their children, beat, relay, manage.py, tests) imports this package before that.
# The run command points all it starts at one folder of its own, emptied at start.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", _default_metrics_dir())
with contextlib.suppress(OSError):  # then the metric writes log that they are lost; the process starts
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

from interviewprep.celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
