"""CPU courtesy: a user's work beyond their first job running yields the CPU to everyone else's.

The job machinery marks a try courteous when its claim found another job of the same share (a
user) running, of any kind; the heavy processes the try starts (sandboxes) run niced, so on a
busy machine one user's flood takes the CPU that no one else's work wants. Niceness weighs only
under contention: on an idle machine a courteous process runs as fast as any.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# A niced process's CPU weight is 110 beside a normal one's 1024 (the kernel's weight table),
# so it still gets about a tenth: never starved into a wall-clock time-out.
COURTEOUS_NICENESS = 10

_NICE = shutil.which("nice") or "/usr/bin/nice"
_courteous: ContextVar[bool] = ContextVar("courteous", default=False)


@contextmanager
def courtesy(courteous: bool) -> Iterator[None]:
    """The work inside is (or is not) a user's extra job."""
    token = _courteous.set(courteous)
    try:
        yield
    finally:
        _courteous.reset(token)


def courteous_argv(argv: list[str]) -> list[str]:
    """`argv` as the current work should start it: behind `nice` when it is courteous."""
    if not _courteous.get():
        return argv
    return [_NICE, "-n", str(COURTEOUS_NICENESS), *argv]
