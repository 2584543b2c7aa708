"""deploy/systemd/: one unit per Procfile line, each checked by `systemd-analyze verify`, running
the line through `interviewprep.procfile_exec`; the workers' hardening leaves the sandbox whole."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from interviewprep.config import load
from interviewprep.processes import ROOT, parse_procfile

pytestmark = pytest.mark.nodb

UNITS = ROOT / "deploy" / "systemd"
INSTALL = "/opt/interviewprep"
# Every Celery worker line of the Procfile (each may run candidate code in the sandbox).
WORKERS = [line.split(":", 1)[0] for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("worker")]


def _unit(name: str) -> dict[str, dict[str, str]]:
    """Each section's settings; a key given more than once (ExecStart= of a oneshot) keeps its first."""
    sections: dict[str, dict[str, str]] = {}
    section: dict[str, str] = {}
    for line in (UNITS / name).read_text().splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = sections.setdefault(line[1:-1], {})
        elif line and not line.startswith("#"):
            key, _, value = line.partition("=")
            section.setdefault(key, value)
    return sections


def _rendered(tmp_path: Path) -> list[Path]:
    """The units with this checkout in place of the install path, so their programs exist."""
    paths = []
    for unit in sorted(UNITS.iterdir()):
        text = unit.read_text()
        assert INSTALL in text or unit.suffix == ".target", f"{unit.name} names no {INSTALL}"
        path = tmp_path / unit.name
        path.write_text(text.replace(INSTALL, str(ROOT)))
        paths.append(path)
    return paths


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_every_unit_passes_systemd_analyze_verify(tmp_path):
    units = _rendered(tmp_path)
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *[u.name for u in units]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # A warning ("Unknown key", "ignoring") is a fault too, though verify may exit 0 for it.
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_a_misspelt_unit_fails_the_verify(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    _rendered(tmp_path)
    bad = tmp_path / "interviewprep-web.service"
    bad.write_text(bad.read_text().replace("KillMode=mixed", "KillMode=mixd"))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", bad.name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "mixd" in done.stdout + done.stderr


def test_each_procfile_line_has_a_unit_that_runs_that_line():
    for entry in parse_procfile():
        unit = _unit(f"interviewprep-{entry.name}.service")
        assert unit["Service"]["ExecStart"] == f"{INSTALL}/.venv/bin/python -m interviewprep.procfile_exec {entry.name}"
        assert unit["Service"]["WorkingDirectory"] == INSTALL
        assert unit["Service"]["EnvironmentFile"] == "/etc/interviewprep/interviewprep.env"
        assert unit["Unit"]["PartOf"] == "interviewprep.target"
    target = (UNITS / "interviewprep.target").read_text()
    wanted = {word for line in target.splitlines() if line.startswith("Wants=") for word in line[6:].split()}
    assert wanted == {f"interviewprep-{e.name}.service" for e in parse_procfile()} | {"network-online.target"}


def test_flower_is_the_procfiles_commented_line_and_not_wanted_by_default():
    commented = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("# flower: ")]
    assert len(commented) == 1
    command = commented[0].removeprefix("# flower: ")
    unit = _unit("interviewprep-flower.service")
    assert unit["Service"]["ExecStart"] == f"{INSTALL}/.venv/bin/{command}"
    wants = [line for line in (UNITS / "interviewprep.target").read_text().splitlines() if line.startswith("Wants=")]
    assert not any("flower" in line for line in wants)


def test_services_restart_stop_gracefully_and_run_unprivileged_or_capped():
    time_limit = load({}).job_time_limit
    for path in UNITS.glob("*.service"):
        service = _unit(path.name)["Service"]
        assert service["NoNewPrivileges"] == "yes", path.name
        assert service["ProtectSystem"] == "strict", path.name
        if path.name == "interviewprep-release.service":
            assert service["Type"] == "oneshot"
            continue
        assert service["Restart"] == "always", path.name
        assert service["KillSignal"] == "SIGTERM" and service["KillMode"] == "mixed", path.name
        if service["User"] == "root":
            assert path.stem.removeprefix("interviewprep-") in WORKERS
            assert service["CapabilityBoundingSet"] == "CAP_SETUID CAP_SETGID CAP_KILL"
        else:
            assert service["User"] == "interviewprep" and service["CapabilityBoundingSet"] == ""
    for name in WORKERS:
        service = _unit(f"interviewprep-{name}.service")["Service"]
        # A warm shutdown waits for running jobs, each bounded by the hard time limit.
        assert int(service["TimeoutStopSec"]) > time_limit
        # bubblewrap needs user namespaces, its mounts and the system calls they take.
        assert "RestrictNamespaces" not in service and "SystemCallFilter" not in service
        assert "PrivateUsers" not in service and "MemoryDenyWriteExecute" not in service


def test_procfile_exec_becomes_the_line_with_the_shells_expansions(tmp_path):
    procfile = tmp_path / "Procfile"
    procfile.write_text('show: echo "port=${PORT:-8000} pid=$$ path=$PATH"\n')
    env = {**os.environ, "PORT": "8123", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "interviewprep.procfile_exec", "show", "--procfile", str(procfile)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert f"port=8123 pid={proc.pid} " in out  # exec'd, not a child: the supervisor's pid is the server
    assert out.split("path=")[1].startswith(str(Path(sys.executable).parent))
    missing = subprocess.run(
        [sys.executable, "-m", "interviewprep.procfile_exec", "nope", "--procfile", str(procfile)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "no 'nope' line" in missing.stderr


PROBE = """
from evaluation.sandbox import run_python
answer = "def f(x):\\n    return x * 2\\n"
run = run_python(code=answer, function="f", tests_args=[[21]], cpu_limit_s=1, memory_limit_mb=256)
print(run.mode, run.ended, run.tests[0].value)
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_the_sandbox_keeps_its_mode_under_the_worker_units_privileges():
    """No systemd runs here: util-linux setpriv applies the same kernel settings as the units'
    NoNewPrivileges= and CapabilityBoundingSet= before the sandbox is probed and used."""
    caps = _unit("interviewprep-worker.service")["Service"]["CapabilityBoundingSet"].split()
    bounding = ",".join(["-all", *(f"+{cap.removeprefix('CAP_').lower()}" for cap in caps)])
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", "import django; django.setup()\n" + PROBE]

    def probe(prefix: list[str]) -> str:
        done = subprocess.run([*prefix, *argv], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    free = probe([])
    confined = probe(["setpriv", "--no-new-privs", "--bounding-set", bounding])
    assert confined == free
    assert confined[1:] == ["completed", "42"] and confined[0].startswith("bwrap+")
