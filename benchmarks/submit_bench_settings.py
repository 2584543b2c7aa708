"""The app's own settings with one extra URL, the bare view `bench_submit.py` compares against.

Middleware, authentication, database and gunicorn flags stay exactly the app's: only the URL
configuration changes, so the ratio prices the submit path and nothing else.
"""

from interviewprep.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.submit_bench_urls"
