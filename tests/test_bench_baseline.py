"""The benchmarks' bare Django app, the baseline `make bench` measures the web tier against,
starts. It had stopped starting unseen: the evaluation app it installs came to read the app's
configuration as it starts, and with evaluation listed first it met an import cycle that the
app's own order hid."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.processes import ROOT

pytestmark = pytest.mark.nodb


def test_the_benchmarks_bare_django_app_starts():
    code = "import django; django.setup(); import benchmarks.bare_urls; print('started')"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.bare_settings"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "started", done.stderr[-3000:]
