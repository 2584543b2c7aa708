"""Start one box inside the chosen layers, feed it, watch it, and reap it.

The box's process is the warden (`_warden.py`): Debian's python3, which locks itself down and
then runs a Python answer's tests, or execs a program (a compiler, or a language's harness
with the answer), or supervises one per test.

Everything the box sends back is read through caps (never `capture_output=True`, which
buffers without bound and hangs while an orphan holds the pipe), the wall-clock deadline is
kept here, the whole process group is killed on expiry, and the process is reaped with
`os.wait4` so its rusage can tell CPU time-outs from wall time-outs and memory failures.

The host writes no file for the box: the warden's compiled code, then the answer and the
tests' arguments go through stdin, results come back on an inherited pipe, so there is no
host path a planted symlink could redirect. A second message (`later`) may follow on stdin,
sent only once `release` has accepted an event the box reported; `RawRun.released_at` says
how many events had arrived by then, which are the only ones that cannot depend on it.

Per-run cost is kept down by doing once per worker what every box would repeat (compiling
the warden, building the seccomp filter: see `_prepare.py`), and by dropping to the slot's
uid with `unshare --setuid` so that subprocess can vfork: `user=` makes it fork (copy) the
whole worker, which costs more than the extra exec.
"""

from __future__ import annotations

import dataclasses
import json
import marshal
import math
import os
import re
import resource
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from evaluation.evaluators.base import TransientEvaluationError
from evaluation.sandbox.request import BoxRequest
from evaluation.sandbox.slots import slot_held, slot_uid
from interviewprep.courtesy import courteous_argv

PYTHON = "/usr/bin/python3"
EXIT_SETUP = 3
EXIT_CPU = 99
STREAM_CAP = 1 << 20  # raw stdout/stderr: the warden captures print(); this is os.write(1, ...)
STREAM_KEEP = 4096
RESULT_CAP = 16 << 20
DRAIN_GRACE_S = 0.2
KILL_GRACE_S = 2.0
TMP_BYTES = 8 << 20
PREPARE_TIMEOUT_S = 30.0
# Takes the warden's code object off stdin (4-byte length, then marshal) and runs it; the
# warden then reads its request from the rest of stdin.
BOOTSTRAP = """import marshal, posix
def _exact(size):
    data = b""
    while len(data) < size:
        chunk = posix.read(0, size - len(data))
        if not chunk:
            raise EOFError("stdin ended inside the warden's code")
        data += chunk
    return data
exec(marshal.loads(_exact(int.from_bytes(_exact(4), "little"))))
"""


@dataclass(frozen=True)
class Layers:
    bwrap: bool
    uid: bool
    seccomp: bool
    landlock: bool

    @property
    def name(self) -> str:
        parts = ["bwrap"] if self.bwrap else ["rlimits"] + (["uid"] if self.uid else [])
        parts += (["seccomp"] if self.seccomp else []) + (["landlock"] if self.landlock else [])
        return "+".join(parts)

    @property
    def allowed(self) -> bool:
        # Landlock alone, outside bwrap's mount namespace, was measured to let a pathname
        # unix socket (PostgreSQL's) and fork through, so it needs bwrap beside it.
        return self.seccomp or (self.landlock and self.bwrap)


@dataclass
class RawRun:
    events: list[dict[str, Any]]
    exit_code: int | None  # the box's exit code, None when it died of a signal
    signal: int | None
    cpu_s: float
    max_rss_kb: int
    wall_s: float
    killed: str | None  # "wall" or "output" when this side killed the box
    stdout_head: bytes = b""
    stderr_head: bytes = b""
    result_bytes: int = 0
    released_at: int | None = None  # events received before `later` was sent; None: never sent
    extra: dict[str, Any] = field(default_factory=dict)

    def event(self, name: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("e") == name), None)


def cpu_hard_limit(cpu_limit_s: float) -> int:
    """Whole seconds for RLIMIT_CPU, whose SIGKILL backs up the warden's exact timer."""
    return math.ceil(cpu_limit_s) + 1


@cache
def warden_source() -> str:
    return Path(__file__).with_name("_warden.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Prepared:
    warden: bytes  # the warden's code object, marshalled by PYTHON itself
    seccomp_bpf: dict[str, bytes] | None  # by profile (see `_prepare.py`); None: python3-seccomp is missing here
    why_no_seccomp: str


_prepare_lock = threading.Lock()
_prepared: Prepared | None = None


def prepared() -> Prepared:
    """What `_prepare.py` builds, once per process; raises TransientEvaluationError if it fails."""
    global _prepared
    with _prepare_lock:
        if _prepared is None:
            _prepared = _prepare()
        return _prepared


def forget_prepared() -> None:
    global _prepared
    with _prepare_lock:
        _prepared = None


def _prepare() -> Prepared:
    source = Path(__file__).with_name("_prepare.py").read_text(encoding="utf-8")
    try:
        # Only the project's own code runs here, so plain capturing is fine (unlike the box's output).
        done = subprocess.run(
            [PYTHON, "-I", "-S", "-B", "-c", source], input=warden_source().encode("utf-8"),
            capture_output=True, env={}, cwd="/", timeout=PREPARE_TIMEOUT_S, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ValueError(f"exit {done.returncode}: {done.stderr[-300:].decode('utf-8', 'replace')}")
        warden, programs, why = marshal.loads(done.stdout)  # noqa: S302 - our own program's output
        if not isinstance(warden, bytes) or not isinstance(why, str):
            raise ValueError("unexpected output")
        if programs is not None and (
            not isinstance(programs, dict)
            or not all(isinstance(p, bytes) and p and not len(p) % 8 for p in programs.values())
        ):
            raise ValueError("a seccomp filter is not a BPF program")
    except (OSError, subprocess.SubprocessError, ValueError, EOFError, TypeError) as exc:
        raise TransientEvaluationError(f"the sandbox's warden could not be prepared: {exc}") from exc
    return Prepared(warden, programs, why)


@cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


@cache
def unshare_path() -> str | None:
    """util-linux's unshare if it can drop ids; setpriv would too but looks the ids up in NSS (~1 ms)."""
    path = shutil.which("unshare", path="/usr/bin:/bin")
    if path is None:
        return None
    try:
        usage = subprocess.run([path, "--help"], capture_output=True, env={}, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return path if b"--setuid" in usage and b"--setgid" in usage else None


def _as_uid(argv: list[str], uid: int | None) -> tuple[list[str], dict[str, Any]]:
    """argv and Popen keywords that run `argv` as `uid` (gid too, no supplementary groups)."""
    if uid is None:
        return argv, {}
    unshare = unshare_path()
    if unshare is None:
        return argv, {"user": uid, "group": uid, "extra_groups": []}
    # With no namespace flag it only calls setgroups(0), setgid and setuid, which as root set
    # the real, effective and saved ids, as user=/group=/extra_groups= do; any failure exits.
    return [unshare, f"--setgid={uid}", f"--setuid={uid}", "--", *argv], {}


@cache
def _root_links() -> tuple[str, ...]:
    """Merged-/usr symlinks (/lib -> usr/lib, ...) recreated in the box; real dirs bound."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return tuple(args)


@dataclass(frozen=True)
class Bind:
    host: str
    box: str  # where the box sees it
    writable: bool = False


def _bwrap_argv(bwrap: str, binds: tuple[Bind, ...], info_fd: int) -> list[str]:
    # Only /usr is visible (and what `binds` adds): no /etc, /home, /root, /var/run, /proc,
    # /work, and no /dev (Landlock refuses it anyway, and --dev's device binds cost ~0.35 ms a
    # run). The tmpfs for / and /tmp would be writable and unbounded without the remount and
    # the size; the remount does not reach a writable bind, which is its own mount.
    mounts: list[str] = []
    for bind in binds:
        mounts += ["--bind" if bind.writable else "--ro-bind", bind.host, bind.box]
    return [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--as-pid-1", "--clearenv", "--info-fd", str(info_fd),
        "--ro-bind", "/usr", "/usr", *_root_links(), *mounts,
        "--size", str(TMP_BYTES), "--tmpfs", "/tmp",  # noqa: S108 - the box's own
        "--remount-ro", "/", "--chdir", "/",
    ]  # fmt: skip


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _sweep_uid(uid: int) -> None:
    """Kill every process left under the slot's uid (kill(-1) spares only the caller)."""
    kill = shutil.which("kill", path="/usr/bin:/bin")
    if kill is None:
        return
    argv, identity = _as_uid([kill, "-KILL", "-1"], uid)
    try:
        subprocess.run(
            argv, env={}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=5, check=False, **identity,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pass


def _parse_events(data: bytes | bytearray) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in bytes(data).split(b"\n"):
        if not line:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and isinstance(event.get("e"), str):
            events.append(event)
    return events


class _Later(NamedTuple):
    """A second message for stdin, sent once `release` returns True for an event."""

    message: bytes
    release: Callable[[dict[str, Any]], bool]


def launch(
    layers: Layers,
    request: BoxRequest,
    *,
    cpu_limit_s: float,
    memory_bytes: int,
    wall_s: float,
    later: bytes | None = None,
    release: Callable[[dict[str, Any]], bool] | None = None,
    profile: str = "python",
    binds: tuple[Bind, ...] = (),
    stdin_tail: bytes = b"",
    slot: int | None = None,
) -> RawRun:
    """Run one box under `layers`; raise TransientEvaluationError if it cannot start.

    `stdin_tail` follows the request on stdin (the tests of a program the warden execs).
    With `later`, those bytes are sent once `release` returns True for an event; the box
    reads them when it is done with the first part. `profile` picks the seccomp filter (see
    `_prepare.py`); `binds` are host paths the box sees (with bwrap). `slot` is a slot the
    caller already holds (a compile and its run share one uid and one directory).
    """
    as_root = os.geteuid() == 0
    if layers.uid and not as_root:
        raise TransientEvaluationError("the uid layer needs the worker to run as root")
    bwrap = bwrap_path() if layers.bwrap else None
    if layers.bwrap and bwrap is None:
        raise TransientEvaluationError("bwrap is not installed")
    ready = prepared()
    if layers.seccomp and ready.seccomp_bpf is None:
        raise TransientEvaluationError(f"no seccomp filter: {ready.why_no_seccomp}")
    filters = ready.seccomp_bpf or {}
    boxed = dataclasses.replace(
        request,
        seccomp=layers.seccomp,
        seccomp_bpf=filters.get(profile) if layers.seccomp or request.probe else None,
        # A supervisor's children run the answer: each loads the program's filter on top.
        child_seccomp_bpf=filters.get("program") if layers.seccomp and profile == "supervisor" else None,
        landlock=layers.landlock,
        cpu_limit=float(cpu_limit_s),
        cpu_hard_limit=cpu_hard_limit(cpu_limit_s),
        memory_bytes=int(memory_bytes),
        # Without bwrap's --die-with-parent the warden arms PDEATHSIG itself.
        parent_pid=0 if layers.bwrap else os.getpid(),
    )
    blob = len(ready.warden).to_bytes(4, "little") + ready.warden + boxed.framed() + stdin_tail
    second = _Later(later, release or (lambda event: False)) if later is not None else None
    if slot is not None:
        return _launch_as(layers, bwrap, slot, blob, second, wall_s, binds)
    with slot_held() as held:
        return _launch_as(layers, bwrap, held, blob, second, wall_s, binds)


def _launch_as(
    layers: Layers,
    bwrap: str | None,
    slot: int,
    blob: bytes,
    second: _Later | None,
    wall_s: float,
    binds: tuple[Bind, ...],
) -> RawRun:
    uid = slot_uid(slot) if layers.uid else None
    raw: RawRun | None = None
    try:
        raw = _launch_in_slot(bwrap, uid, blob, second, wall_s, binds)
        return raw
    finally:
        # Without a pid namespace an escaped process would outlive the run; with seccomp none
        # can be forked, but the sweep is cheap and closes the gap. With bwrap, a box killed on
        # its deadline was seen to outlive bwrap by seconds (a Go program): sweep then too.
        if uid is not None and (not layers.bwrap or raw is None or raw.killed or raw.signal):
            _sweep_uid(uid)


def _launch_in_slot(
    bwrap: str | None,
    uid: int | None,
    blob: bytes,
    second: _Later | None,
    wall_s: float,
    binds: tuple[Bind, ...] = (),
) -> RawRun:
    """One box from start to reap: the steps below, in order."""
    later, release = second if second is not None else (None, None)
    pipes = Pipes.open()
    box = _start_box(pipes, bwrap, uid, binds)
    streams = Streams(pipes)
    deadline = _Deadline(box.proc.pid, box.started + wall_s, streams.child_pid)
    selector = selectors.DefaultSelector()
    stdin = _Stdin(selector, pipes.in_w, blob, later)
    try:
        exited_at, released_at = _watch(selector, box.pidfd, stdin, streams, deadline, release)
        returncode, usage = _reap(box.proc, exited_at)
    finally:
        selector.close()
        os.close(box.pidfd)
        stdin.close()
        streams.close()
    wall = time.monotonic() - box.started
    exit_code, died_of = exit_and_signal(returncode, via_bwrap=bwrap is not None)
    return RawRun(
        events=streams.finish(),
        exit_code=exit_code,
        signal=died_of,
        cpu_s=usage.ru_utime + usage.ru_stime,
        max_rss_kb=usage.ru_maxrss,
        wall_s=wall,
        killed=deadline.killed,
        stdout_head=bytes(streams.kept[pipes.out_r]),
        stderr_head=bytes(streams.kept[pipes.err_r]),
        result_bytes=streams.received[pipes.res_r],
        released_at=released_at,
    )


@dataclass(frozen=True)
class Pipes:
    """The box's pipes, each a read end and a write end. bwrap tells the box's pid on the info
    pipe, so a deadline can kill the box itself and let bwrap reap it: killing bwrap first
    orphans the box, which lingered as a zombie."""

    in_r: int
    in_w: int
    out_r: int
    out_w: int
    err_r: int
    err_w: int
    res_r: int
    res_w: int
    info_r: int
    info_w: int

    @classmethod
    def open(cls) -> Pipes:
        return cls(*(end for _ in range(5) for end in os.pipe2(os.O_CLOEXEC)))

    @property
    def box_ends(self) -> tuple[int, ...]:
        return (self.in_r, self.out_w, self.err_w, self.res_w, self.info_w)

    @property
    def our_ends(self) -> tuple[int, ...]:
        return (self.in_w, self.out_r, self.err_r, self.res_r, self.info_r)


def _close_all(fds: tuple[int, ...]) -> None:
    for fd in fds:
        os.close(fd)


@dataclass(frozen=True)
class _Box:
    proc: subprocess.Popen[bytes]
    pidfd: int  # readable once the box has exited
    started: float


def _start_box(pipes: Pipes, bwrap: str | None, uid: int | None, binds: tuple[Bind, ...]) -> _Box:
    """Start the box on the pipes' box ends, which are then closed here; on failure every end is."""
    argv = [PYTHON, "-I", "-S", "-B", "-c", BOOTSTRAP, str(pipes.res_w)]
    if bwrap is not None:
        argv = _bwrap_argv(bwrap, binds, pipes.info_w) + argv
    argv, identity = _as_uid(argv, uid)
    argv = courteous_argv(argv)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, stdin=pipes.in_r, stdout=pipes.out_w, stderr=pipes.err_w, pass_fds=(pipes.res_w, pipes.info_w),
            env={}, cwd="/", close_fds=True, process_group=0, **identity,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        _close_all(pipes.box_ends + pipes.our_ends)
        raise TransientEvaluationError(f"the sandbox could not start: {exc}") from exc
    _close_all(pipes.box_ends)
    try:
        pidfd = os.pidfd_open(proc.pid)
    except OSError as exc:
        _kill_group(proc.pid)
        os.wait4(proc.pid, 0)
        proc.returncode = -9
        _close_all(pipes.our_ends)
        raise TransientEvaluationError(f"pidfd_open failed: {exc}") from exc
    return _Box(proc, pidfd, started)


class Streams:
    """What the box sends back, read through caps: stdout and stderr (STREAM_KEEP bytes kept,
    STREAM_CAP allowed), the result stream (kept up to RESULT_CAP, also its cap) and bwrap's
    info pipe (STREAM_KEEP kept, no cap). Results are parsed as they arrive, so `release` can
    see them."""

    def __init__(self, pipes: Pipes) -> None:
        self.result, self.info = pipes.res_r, pipes.info_r
        self.kept: dict[int, bytearray] = {fd: bytearray() for fd in (pipes.out_r, pipes.err_r, self.result, self.info)}
        self.received = dict.fromkeys(self.kept, 0)
        self.caps = {pipes.out_r: STREAM_CAP, pipes.err_r: STREAM_CAP, self.result: RESULT_CAP}
        self.events: list[dict[str, Any]] = []
        self._parsed = 0  # how much of the result stream is parsed into `events`

    def take(self, fd: int, chunk: bytes) -> list[dict[str, Any]]:
        """Keep what fits of `chunk`; the events it completes on the result stream."""
        self.received[fd] += len(chunk)
        kept = self.kept[fd]
        base = len(kept)
        keep = RESULT_CAP if fd == self.result else STREAM_KEEP
        if base < keep:
            kept += chunk[: keep - base]
        if fd != self.result:
            return []
        # Only up to the newest newline in this chunk, so a long line is scanned once.
        end = kept.rfind(b"\n", base) + 1
        if end <= self._parsed:
            return []
        new = _parse_events(kept[self._parsed : end])
        self._parsed = end
        self.events += new
        return new

    def over_cap(self, fd: int) -> bool:
        return fd in self.caps and self.received[fd] > self.caps[fd]

    def child_pid(self) -> int | None:
        found = re.search(rb'"child-pid":\s*(\d+)', self.kept[self.info])
        return None if found is None else int(found.group(1))

    def finish(self) -> list[dict[str, Any]]:
        """Every event, with those of a last line that has no newline."""
        self.events += _parse_events(self.kept[self.result][self._parsed :])
        self._parsed = len(self.kept[self.result])
        return self.events

    def close(self) -> None:
        _close_all(tuple(self.kept))


class _Deadline:
    """The kill policy: the box itself is killed on the wall-clock deadline or an output cap
    (through bwrap's child pid, else the whole group), and the group once `KILL_GRACE_S` past
    the deadline, should bwrap not end with its box."""

    def __init__(self, pgid: int, at: float, child_pid: Callable[[], int | None]) -> None:
        self.pgid, self.at, self._child_pid = pgid, at, child_pid
        self.killed: str | None = None  # "wall" or "output"

    def kill(self, why: str) -> None:
        if self.killed is not None:
            return
        self.killed = why
        child = self._child_pid()
        if child is None:
            _kill_group(self.pgid)
            return
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def enforce(self, now: float) -> None:
        """While the box runs."""
        if now >= self.at:
            self.kill("wall")
        if self.killed is not None and now >= self.at + KILL_GRACE_S:
            _kill_group(self.pgid)  # bwrap did not end with its box

    def select_timeout(self, now: float, exited_at: float | None) -> float:
        if self.killed is not None:
            return 0.05
        return max((exited_at + DRAIN_GRACE_S if exited_at is not None else self.at) - now, 0.01)


class _Stdin:
    """Feeds the box's stdin without blocking: the first part at once, `later` once released.
    Closed when all is written and nothing more may follow, so the box sees its end."""

    def __init__(self, selector: selectors.BaseSelector, fd: int, blob: bytes, later: bytes | None) -> None:
        self.selector, self.fd, self.later = selector, fd, later
        self.pending = memoryview(blob)
        self.open = True
        self.released = False

    def writable(self) -> None:
        try:
            self.pending = self.pending[os.write(self.fd, self.pending[: 1 << 16]) :]
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.pending = self.pending[:0]
        if not self.pending and self.open:
            self.selector.unregister(self.fd)
            if self.later is None or self.released:
                os.close(self.fd)
                self.open = False

    def release(self, *, send: bool) -> None:
        self.released = True
        if self.open and send and self.later is not None:
            if not self.pending:
                self.selector.register(self.fd, selectors.EVENT_WRITE)
            self.pending = memoryview(bytes(self.pending) + self.later)

    def close(self) -> None:
        if self.open:
            os.close(self.fd)
            self.open = False


def _watch(
    selector: selectors.BaseSelector,
    pidfd: int,
    stdin: _Stdin,
    streams: Streams,
    deadline: _Deadline,
    release: Callable[[dict[str, Any]], bool] | None,
) -> tuple[float | None, int | None]:
    """The I/O loop, until the box has exited and its streams are drained (or DRAIN_GRACE_S
    has passed): when it exited, and how many events had arrived when `later` was released."""
    for fd in (stdin.fd, *streams.kept):
        os.set_blocking(fd, False)
    selector.register(stdin.fd, selectors.EVENT_WRITE)
    for fd in streams.kept:
        selector.register(fd, selectors.EVENT_READ)
    selector.register(pidfd, selectors.EVENT_READ)
    open_readers = set(streams.kept)
    exited_at: float | None = None
    released_at: int | None = None
    while True:
        now = time.monotonic()
        if exited_at is not None and (not open_readers or now > exited_at + DRAIN_GRACE_S):
            return exited_at, released_at
        if exited_at is None:
            deadline.enforce(now)
        for key, _ in selector.select(deadline.select_timeout(now, exited_at)):
            fd = key.fd
            if fd == pidfd:
                exited_at = time.monotonic()
                selector.unregister(pidfd)
            elif fd == stdin.fd:
                stdin.writable()
            else:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    open_readers.discard(fd)
                    continue
                new = streams.take(fd, chunk)
                if streams.over_cap(fd):
                    deadline.kill("output")
                if release is not None and released_at is None and any(map(release, new)):
                    released_at = len(streams.events)
                    stdin.release(send=deadline.killed is None)


def _reap(proc: subprocess.Popen[bytes], exited_at: float | None) -> tuple[int, resource.struct_rusage]:
    """The box's exit code as Popen gives it (a signal's negated) and its rusage."""
    if exited_at is None:  # unreachable unless select misbehaves; never leave it running
        _kill_group(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage


def exit_and_signal(returncode: int, *, via_bwrap: bool) -> tuple[int | None, int | None]:
    """The box's exit code, or the signal it died of (then no exit code)."""
    if returncode < 0:
        return None, -returncode
    if via_bwrap and returncode > 128:
        return None, returncode - 128  # bwrap reports its child's signal so
    return returncode, None
