"""The app's own settings with the same-stack baseline URLs (`bench_urls.py`) the HTTP benchmarks
compare against: middleware, authentication, database, cache client and gunicorn flags stay
exactly the app's, so a ratio to them prices the measured view and nothing else."""

from interviewprep.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.bench_urls"
