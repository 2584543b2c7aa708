"""The app's own settings with one extra URL, the bare cache read `bench_cached_read.py` compares
against: middleware, authentication, cache client and gunicorn flags stay exactly the app's."""

from interviewprep.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.bench_urls"
