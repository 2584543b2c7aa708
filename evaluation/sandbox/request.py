"""What the launcher sends into the box, typed, and the one place it is serialised.

`_warden.py` runs standalone in the box and imports nothing of the project, so it reads a
plain dict: the field names below are its keys (tests/evaluation/test_sandbox_request.py
holds the two lists to each other). Messages are a 4-byte length, then marshal.
"""

from __future__ import annotations

import dataclasses
import marshal
from dataclasses import dataclass, field
from typing import Any

MARSHAL_VERSION = 4


def framed(message: Any) -> bytes:
    """A message for the box's stdin: a 4-byte length, then marshal."""
    data = marshal.dumps(message, MARSHAL_VERSION)
    return len(data).to_bytes(4, "little") + data


@dataclass(frozen=True)
class ProgramExec:
    """A program the box execs once every layer is set up (a compiler, or a language's
    harness with the answer), instead of running a Python answer itself."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    rules: list[list[str]]  # Landlock's: [path, "r" | "x" | "rw"]
    memory: str  # "data": RLIMIT_DATA holds the memory limit, else RLIMIT_AS
    processes: int  # RLIMIT_NPROC
    file_bytes: int  # RLIMIT_FSIZE
    results_on_stdout: bool  # the result channel becomes its fd 1
    per_test: bool = False  # run anew for each test, the box staying as its supervisor


@dataclass(frozen=True)
class BoxRequest:
    """The box's first message. Callers say what to run; `launch` adds the layers and limits."""

    probe: bool = False  # only report which layers apply
    code: str | None = None  # a Python answer
    function: str | None = None
    tests: list[bytes] = field(default_factory=list)  # shown tests: marshalled args, or a program's lines
    more: int = 0  # hidden tests, sent in a second message once `release` allows
    exec: ProgramExec | None = None
    fresh_module: bool = True  # only benchmarks/bench_sandbox.py turns it off, to weigh it
    seccomp: bool = False
    seccomp_bpf: bytes | None = None
    child_seccomp_bpf: bytes | None = None  # a supervisor's children load it on top
    landlock: bool = False
    cpu_limit: float = 0.0
    cpu_hard_limit: int = 0
    memory_bytes: int = 0
    parent_pid: int = 0  # nonzero: arm PDEATHSIG and check the parent is still this one

    def framed(self) -> bytes:
        return framed(dataclasses.asdict(self))
