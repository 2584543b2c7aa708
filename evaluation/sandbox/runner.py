"""A Python answer's tests in one sandboxed box, turned into plain per-test facts (and any
box's events read so: `box_run_read`).

The caller (the code evaluator) judges; this module only reports what each test returned or
how it failed, and how the run as a whole ended.

Hidden tests' arguments reach the box only after every other test has reported, and what
the box says after that is reduced to each hidden test's status, value and time: nothing the
answer printed, raised or forged once it could read them gets out (docs/sandbox.md).
"""

from __future__ import annotations

import marshal
import math
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.evaluators.base import PermanentEvaluationError, TransientEvaluationError
from evaluation.sandbox.launch import EXIT_CPU, Layers, RawRun, cpu_hard_limit, launch
from evaluation.sandbox.modes import forget_probe, layers_for
from evaluation.sandbox.request import MARSHAL_VERSION, BoxRequest, framed

STARTUP_ALLOWANCE_S = 1.0
MAX_CPU_LIMIT_S = 30.0
MEMORY_FAILURE_SHARE = 0.85  # peak RSS this close to the limit means the limit killed it


@dataclass(frozen=True)
class TestRun:
    status: str  # ok, error, memory, output, badvalue
    value: Any
    time_ms: float
    output: str  # always "" for a hidden test
    message: str | None  # always None for a hidden test


@dataclass(frozen=True)
class LoadError:
    kind: str  # compile, exception, missing, output
    message: str
    line: int | None  # in the answer's own text
    column: int | None


@dataclass(frozen=True)
class BoxRun:
    mode: str
    load_error: LoadError | None
    loaded: bool  # the top level ran and defined the function: a stop after this hit a test
    tests: list[TestRun | None]  # shown tests, then hidden ones; None: never reported (see `ended`)
    ended: str  # completed, cpu, wall, memory, output, crashed
    cpu_s: float
    wall_s: float
    max_rss_kb: int
    diagnostic: str


def wall_limit_for(cpu_limit_s: float) -> float:
    # Generous beside the CPU limit: on a busy 2-core machine a CPU-bound answer gets less
    # than one core, and wall time is only meant to catch sleeping and blocking.
    # It also outlasts RLIMIT_CPU so a long C call is reported as a CPU time-out.
    return STARTUP_ALLOWANCE_S + max(1.5 * cpu_limit_s, cpu_hard_limit(cpu_limit_s) + 0.25)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _position(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def release_after(shown: int) -> Callable[[dict[str, Any]], bool]:
    """True at the event after which every shown test has reported (or the answer loaded,
    when none is shown): only then may the hidden tests' arguments enter the box."""
    waiting = set(range(shown))

    def ready(event: dict[str, Any]) -> bool:
        index = event.get("i")
        if event.get("e") == "test" and isinstance(index, int):
            waiting.discard(index)
            return not waiting
        return event.get("e") == "loaded" and not waiting

    return ready


def _test_run(event: dict[str, Any], *, shown: bool) -> TestRun | None:
    status = _text(event.get("s"))
    if status not in ("ok", "error", "memory", "output", "badvalue"):
        return None
    if status == "ok" and "v" not in event:
        status = "badvalue"
    time_ms = event.get("t")
    return TestRun(
        status=status,
        value=event.get("v"),
        time_ms=float(time_ms) if isinstance(time_ms, int | float) and not isinstance(time_ms, bool) else 0.0,
        output=_text(event.get("o")) if shown else "",
        message=(_text(event.get("msg")) or None) if shown else None,
    )


def _ended(
    raw: RawRun,
    cpu_limit_s: float,
    memory_bytes: int,
    finished: bool,
    crash_reason: Callable[[str], str | None] | None = None,
) -> str:
    if raw.killed == "output" or raw.signal == signal.SIGXFSZ:
        return "output"
    if raw.exit_code == EXIT_CPU:
        return "cpu"
    cpu_spent = raw.cpu_s >= cpu_limit_s * 0.95
    # SIGPROF: a program the warden execs keeps its CPU timer, with the default action.
    if raw.signal in (signal.SIGKILL, signal.SIGXCPU, signal.SIGPROF) and cpu_spent:
        return "cpu"
    if raw.killed == "wall":
        return "cpu" if cpu_spent else "wall"
    if finished and raw.exit_code == 0:
        return "completed"
    if raw.signal is not None and raw.max_rss_kb * 1024 >= MEMORY_FAILURE_SHARE * memory_bytes:
        return "memory"
    if crash_reason is not None and crash_reason(raw.stderr_head.decode("utf-8", "replace")) == "memory":
        return "memory"
    if not finished and cpu_spent:
        return "cpu"
    return "crashed"


def _diagnostic(raw: RawRun) -> str:
    parts = [f"exit={raw.exit_code}", f"signal={raw.signal}"]
    if raw.stderr_head:
        parts.append("stderr=" + raw.stderr_head[:300].decode("utf-8", "replace"))
    return " ".join(parts)


def run_python(
    *,
    code: str,
    function: str,
    tests_args: Sequence[Sequence[Any]],
    cpu_limit_s: float,
    memory_limit_mb: int,
    hidden_args: Sequence[Sequence[Any]] = (),
    mode: str | None = None,
) -> BoxRun:
    """Run every test of one submission in one sandboxed process.

    `tests_args` holds each shown test's positional arguments (plain JSON data), `hidden_args`
    the hidden ones', run after them and sent only once all of them have reported. Expected
    values are not taken, so they cannot reach the box. `mode` may force a weaker mode than
    the probed one (tests use it); it can never add a layer the machine lacks.
    """
    layers = layers_for(mode)
    if not 0 < cpu_limit_s <= MAX_CPU_LIMIT_S or not math.isfinite(cpu_limit_s):
        raise PermanentEvaluationError(f"cpu limit {cpu_limit_s} outside (0, {MAX_CPU_LIMIT_S}]")
    memory_bytes = int(memory_limit_mb) << 20
    try:
        blobs = [marshal.dumps(list(args), MARSHAL_VERSION) for args in tests_args]
        hidden = [marshal.dumps(list(args), MARSHAL_VERSION) for args in hidden_args]
    except ValueError as exc:
        raise PermanentEvaluationError(f"test arguments are not plain data: {exc}") from exc
    raw = launch(
        layers,
        BoxRequest(code=code, function=function, tests=blobs, more=len(hidden)),
        cpu_limit_s=cpu_limit_s,
        memory_bytes=memory_bytes,
        wall_s=wall_limit_for(cpu_limit_s),
        later=framed(hidden) if hidden else None,
        release=release_after(len(blobs)),
    )

    return box_run_read(
        layers,
        raw,
        shown=len(blobs),
        total=len(blobs) + len(hidden),
        cpu_limit_s=cpu_limit_s,
        memory_bytes=memory_bytes,
    )


def box_run_read(
    layers: Layers,
    raw: RawRun,
    *,
    shown: int,
    total: int,
    cpu_limit_s: float,
    memory_bytes: int,
    crash_reason: Callable[[str], str | None] | None = None,
) -> BoxRun:
    """The facts of one box's run (a Python answer's, or a program's that speaks the same events)."""
    ready = next((n for n, event in enumerate(raw.events) if event["e"] == "ready"), None)
    setup_error = next((e for e in raw.events[:ready] if e["e"] == "setup_error"), None)
    if setup_error is None and ready is not None:  # the program to exec did not start
        setup_error = next((e for e in raw.events[ready + 1 : ready + 2] if e["e"] == "exec_error"), None)
    if setup_error is not None or ready is None:
        # Nothing of the candidate's ran yet: this is the machine, not the answer.
        forget_probe()
        why = _text(setup_error.get("msg")) if setup_error else _diagnostic(raw)
        raise TransientEvaluationError(f"the sandbox ({layers.name}) did not start: {why}")

    # Only what arrived before the hidden arguments were sent may be shown; after that only
    # the hidden tests' own results and the end count.
    shown_until = raw.released_at if raw.released_at is not None else len(raw.events)
    load_error: LoadError | None = None
    tests: list[TestRun | None] = [None] * total
    finished = loaded = False
    for position, event in enumerate(raw.events[ready + 1 :], start=ready + 1):
        kind, visible = event["e"], position < shown_until
        if kind == "load_error" and visible and load_error is None and not any(tests):
            load_error = LoadError(
                kind=_text(event.get("kind")) or "exception",
                message=_text(event.get("msg")),
                line=_position(event.get("line")),
                column=_position(event.get("col")),
            )
            finished = True
        elif kind == "loaded":
            loaded = True
        elif kind == "test":
            index = event.get("i")
            if not isinstance(index, int) or not 0 <= index < len(tests) or tests[index]:
                continue
            if index < shown and not visible:
                continue
            tests[index] = _test_run(event, shown=index < shown)
        elif kind == "done":
            finished = True
    return BoxRun(
        mode=layers.name,
        load_error=load_error,
        loaded=loaded or any(tests),
        tests=tests,
        ended=_ended(raw, cpu_limit_s, memory_bytes, finished, crash_reason),
        cpu_s=raw.cpu_s,
        wall_s=raw.wall_s,
        max_rss_kb=raw.max_rss_kb,
        diagnostic=_diagnostic(raw),
    )
