"""The chaos drill's short form, in `make test`: two small rounds with fixed seeds, real
processes and real faults (`make chaos` runs the long one)."""

import subprocess
import sys

import pytest

from tests import processes


@pytest.mark.chaos
@pytest.mark.timeout(300)
def test_short_chaos_drill_breaks_no_invariant():
    command = [sys.executable, "-m", "chaos", "--short", "--database-url", processes.test_database_url()]
    done = subprocess.run(command, cwd=processes.ROOT, capture_output=True, text=True, timeout=280)
    report = done.stdout[-8000:] + done.stderr[-3000:]
    assert done.returncode == 0, report
    assert "chaos: 0 violations" in done.stdout, report
