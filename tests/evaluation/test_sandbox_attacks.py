"""Each attack an answer could try ends blocked, and the next ordinary submission still scores.

Attacks run in every mode this machine offers (bubblewrap, and the weaker mode without it),
with short limits so the whole file stays quick.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import textwrap
import uuid
from pathlib import Path

import pytest

import evaluation.sandbox.launch as launch
import evaluation.sandbox.runner as runner
from evaluation.evaluators.base import TransientEvaluationError
from evaluation.sandbox import BoxRun, run_python
from tests.evaluation.sandbox_helpers import assert_normal_submission_scores, sandbox_modes, slots_watched

pytestmark = [pytest.mark.nodb, pytest.mark.parametrize("mode", sandbox_modes())]

REPO = Path(__file__).resolve().parents[2]


def attack(mode: str, body: str, *, cpu: float = 1.0, memory_mb: int = 128) -> BoxRun:
    code = "def attack():\n" + textwrap.indent(textwrap.dedent(body), "    ")
    run = run_python(code=code, function="attack", tests_args=[[]], cpu_limit_s=cpu, memory_limit_mb=memory_mb)
    assert run.mode == mode
    return run


@pytest.fixture(autouse=True)
def _force_mode(mode, monkeypatch):
    """Run every attack in the parametrised mode, then prove the sandbox still works."""
    original = runner.layers_for
    monkeypatch.setattr(runner, "layers_for", lambda requested: original(requested or mode))
    yield
    assert_normal_submission_scores(mode)


def value_of(run: BoxRun) -> object:
    result = run.tests[0]
    assert result is not None, (run.ended, run.diagnostic)
    assert result.status == "ok", (result.status, result.message, result.output)
    return result.value


TRY = """
def attempt(label, action):
    try:
        got = action()
    except BaseException as exc:
        return label + ": blocked " + type(exc).__name__
    return label + ": LEAKED " + repr(got)[:200]
"""


def test_tcp_to_postgres_and_redis_is_blocked(mode):
    run = attack(
        mode,
        TRY
        + """
import socket
out = []
for port in (5432, 6379):
    out.append(attempt(str(port), lambda: socket.create_connection(("127.0.0.1", port), 1)))
return out
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value


def test_postgres_unix_socket_is_blocked(mode):
    run = attack(
        mode,
        TRY
        + """
import socket
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("/var/run/postgresql/.s.PGSQL.5432")
    return s
return [attempt("unix", connect), attempt("pair", socket.socketpair)]
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value


def test_reading_app_settings_and_shadow_is_blocked(mode):
    settings = REPO / "interviewprep" / "settings.py"
    assert settings.exists()
    run = attack(
        mode,
        TRY
        + f"""
out = []
for path in ({str(settings)!r}, "/etc/shadow", "/etc/passwd", "/proc/1/environ", "/root"):
    out.append(attempt(path, lambda: open(path, "rb").read(64)))
return out
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value


def test_writing_outside_the_box_is_blocked(mode):
    name = f"sandbox-escape-{uuid.uuid4().hex}"
    targets = [f"/tmp/{name}", f"/dev/shm/{name}", str(REPO / name), f"/var/tmp/{name}"]
    run = attack(
        mode,
        TRY
        + f"""
out = []
for path in {targets!r}:
    out.append(attempt(path, lambda: open(path, "w").write("x")))
out.append(attempt("mkdir", lambda: __import__("os").mkdir("/tmp/{name}.d")))
return out
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value
    for path in [*targets, f"/tmp/{name}.d"]:
        assert not os.path.lexists(path)


def test_planted_symlinks_are_refused_and_never_followed(mode):
    name = f"sandbox-link-{uuid.uuid4().hex}"
    run = attack(
        mode,
        TRY
        + f"""
import os
out = []
for link in ("/tmp/{name}", "/dev/shm/{name}", "{name}", "/tmp/result"):
    out.append(attempt(link, lambda: os.symlink("{REPO / "interviewprep" / "settings.py"}", link)))
out.append(attempt("hardlink", lambda: os.link("/usr/bin/python3", "/tmp/{name}.h")))
return out
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value
    for path in (f"/tmp/{name}", f"/dev/shm/{name}", f"/{name}", f"/tmp/{name}.h"):
        assert not os.path.lexists(path)


def test_fork_bomb_forks_nothing(mode):
    run = attack(
        mode,
        """
import os
forks = 0
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid == 0:
        while True:
            pass
    forks += 1
return forks
""",
    )
    assert value_of(run) == 0


def test_threads_still_work_inside_the_limits(mode):
    run = attack(
        mode,
        """
import threading
box = []
t = threading.Thread(target=lambda: box.append(41 + 1))
t.start(); t.join()
return box
""",
    )
    assert value_of(run) == [42]


def test_four_gigabyte_allocation_is_a_memory_failure(mode):
    run = attack(mode, "block = bytearray(4 << 30)\nreturn len(block)\n", memory_mb=128)
    result = run.tests[0]
    assert result is not None and result.status == "memory", (run.ended, result)


@pytest.fixture
def cpu_before_wall(monkeypatch):
    """A wall-clock deadline far beyond the CPU limits: the run's usual one (about 3 s here)
    is reached first on a machine that gives the box less than about 60% of a core, and then
    a CPU time-out would be reported as a wall one. What these tests prove is that the CPU
    limits stop the answer, whatever share of a core it gets."""
    monkeypatch.setattr(runner, "wall_limit_for", lambda cpu_limit_s: 120.0)


def test_infinite_loop_is_stopped_by_the_cpu_limit(mode, cpu_before_wall):
    run = attack(mode, "while True:\n    pass\n", cpu=0.5)
    assert run.tests[0] is None and run.ended == "cpu", run


def test_cpu_bound_c_code_is_stopped_by_the_hard_limit(mode, cpu_before_wall):
    # One huge C-level operation never returns to the bytecode loop, so the Python-level
    # timer cannot act; RLIMIT_CPU's SIGKILL must.
    run = attack(mode, "return sum(range(10**13))\n", cpu=0.5)
    assert run.tests[0] is None and run.ended == "cpu", run


def test_sleeping_forever_is_stopped_by_the_wall_deadline(mode):
    run = attack(mode, "import time\ntime.sleep(10**6)\n", cpu=0.5)
    assert run.tests[0] is None and run.ended == "wall", run
    assert run.cpu_s < 0.5


def test_a_gigabyte_of_output_is_cut_off(mode):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = attack(mode, "line = 'x' * 4096\nfor _ in range(262144):\n    print(line)\n")
    result = run.tests[0]
    assert result is not None and result.status == "output", (run.ended, result)
    assert len(result.output) <= 1024
    raw = attack(mode, "import os\nchunk = b'x' * 65536\nwhile True:\n    os.write(1, chunk)\n")
    assert raw.tests[0] is None and raw.ended == "output", raw
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024


def test_double_fork_with_setsid_leaves_no_orphan(mode, monkeypatch):
    # An orphan that got out would never end on its own: still there once the run is over.
    with monkeypatch.context() as patch, slots_watched(patch) as slots:
        run = attack(
            mode,
            TRY
            + """
import os, time
def escape():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(1)
        os._exit(0)
    return "forked"
return [attempt("double fork", escape)]
""",
        )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value
    [slot] = slots
    if os.geteuid() == 0:
        assert slot["left"] == [], f"left running under the slot's uid: {slot['left']}"


def test_spawning_a_subprocess_is_blocked(mode):
    run = attack(
        mode,
        TRY
        + """
import os, subprocess
def system():
    status = os.system("exit 0")
    if status != 0:  # 127 << 8: no shell could be started
        raise OSError(status)
    return "ran"
return [
    attempt("os.system", system),
    attempt("subprocess.run", lambda: subprocess.run(["/usr/bin/id"], capture_output=True)),
    attempt("execv", lambda: os.execv("/usr/bin/id", ["id"])),
    attempt("posix_spawn", lambda: os.posix_spawn("/usr/bin/id", ["id"], {})),
]
""",
    )
    value = value_of(run)
    assert all(": blocked" in line for line in value), value


def test_environment_secrets_are_not_visible(mode, monkeypatch):
    secret = f"s3cret-{uuid.uuid4().hex}"
    monkeypatch.setenv("INTERVIEWPREP_TEST_SECRET", secret)
    run = attack(
        mode,
        """
import os
seen = [repr(dict(os.environ))]
for pid in ["self", "1", "2"] + [str(p) for p in range(2, 80)]:
    try:
        seen.append(open("/proc/" + pid + "/environ", "rb").read().decode("latin-1"))
    except OSError:
        pass
return seen
""",
    )
    value = value_of(run)
    assert secret not in repr(value)
    assert len(value) == 1  # no /proc/*/environ was readable
    assert "INTERVIEWPREP" not in value[0]


def test_expected_values_never_enter_the_box(mode):
    # The parent keeps expected values; the answer searches its whole heap for them.
    from evaluation.evaluators.code import CodeRunnerEvaluator
    from tests.evaluation.sandbox_helpers import request_for

    secret = f"expected-{uuid.uuid4().hex}"
    answer = """
import gc
def leak(x):
    for obj in gc.get_objects():
        if isinstance(obj, (list, dict, tuple)):
            for item in (obj.values() if isinstance(obj, dict) else obj):
                if isinstance(item, str) and item.startswith("expected-"):
                    return item
    return "nothing"
"""
    spec = {"function": "leak", "tests": [{"name": "t", "args": [1], "expected": secret}]}
    outcome = CodeRunnerEvaluator().evaluate(request_for(answer, spec))
    assert outcome.score == 0
    assert secret not in repr(outcome.details)


def test_the_box_holds_only_the_slot_uid_and_cannot_regain_root(mode):
    run = attack(
        mode,
        TRY
        + """
import os
ids = [list(os.getresuid()), list(os.getresgid()), os.getgroups()]
return [ids, attempt("setuid", lambda: os.setuid(0)), attempt("setgid", lambda: os.setgid(0)),
        attempt("setgroups", lambda: os.setgroups([0]))]
""",
    )
    ids, *tries = value_of(run)
    uid = ids[0][0]
    assert 61000 <= uid < 61064 and ids == [[uid] * 3, [uid] * 3, []], ids
    assert all(": blocked" in line for line in tries), tries


@pytest.mark.parametrize("program", [None, b"\xff" * 8], ids=["no filter", "filter the kernel refuses"])
def test_the_answer_never_runs_without_its_seccomp_filter(mode, program, monkeypatch):
    ready = launch.prepared()
    ended: list[launch.RawRun | TransientEvaluationError] = []
    real = runner.launch

    def spy(*args: object, **kwargs: object) -> launch.RawRun:
        try:
            ended.append(real(*args, **kwargs))
        except TransientEvaluationError as exc:
            ended.append(exc)
            raise
        return ended[-1]

    with monkeypatch.context() as patch, slots_watched(patch) as slots:
        filters = None if program is None else dict.fromkeys(ready.seccomp_bpf or {"python": b""}, program)
        patch.setattr(launch, "prepared", lambda: dataclasses.replace(ready, seccomp_bpf=filters))
        patch.setattr(runner, "launch", spy)
        with pytest.raises(TransientEvaluationError):
            attack(mode, "return 1\n")
    [end] = ended
    if program is None:
        # Refused before any box started: no slot was even taken.
        assert isinstance(end, TransientEvaluationError) and "no seccomp filter" in str(end), end
        assert slots == []
    else:
        # The box started and stopped at its setup, before the answer was loaded.
        assert isinstance(end, launch.RawRun), end
        assert end.exit_code == 3 and [e["e"] for e in end.events] == ["setup_error"], end.events
