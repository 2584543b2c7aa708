"""Per-slot unprivileged uids, held with a file lock so no two runs ever share one.

RLIMIT_NPROC counts per uid and a process can signal or inspect every process of its own
uid, so two submissions running at once under one uid could see or starve each other. A
slot is an exclusive `flock` on `<lock dir>/slot-<n>.lock`; the kernel drops it when the
holder dies, so a crashed worker never leaks a slot.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from evaluation.evaluators.base import TransientEvaluationError

BASE_UID = 61000
SLOT_COUNT = 64
WAIT_FOR_SLOT_S = 10.0


def owned_directory(path: str, mode: int, what: str) -> str:
    """`path`, made with `mode` if missing; refused unless it is a real directory of this user's
    that grants nobody more than `mode` does (so nothing in it was planted by someone else)."""
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o777 & ~mode:
        raise TransientEvaluationError(f"sandbox {what} {path} is not private")
    return path


def _lock_dir() -> str:
    """A directory only this user can write to, so nobody can plant the lock files."""
    base = "/run" if os.geteuid() == 0 and os.path.isdir("/run") else tempfile.gettempdir()
    return owned_directory(os.path.join(base, f"interviewprep-sandbox-{os.geteuid()}"), 0o700, "lock directory")


@contextmanager
def slot_held() -> Iterator[int]:
    """Yield a slot number (0..SLOT_COUNT-1) held exclusively until the block ends."""
    directory = _lock_dir()
    start = os.getpid() % SLOT_COUNT
    give_up = time.monotonic() + WAIT_FOR_SLOT_S
    while True:
        for offset in range(SLOT_COUNT):
            slot = (start + offset) % SLOT_COUNT
            fd = os.open(
                os.path.join(directory, f"slot-{slot}.lock"),
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
                continue
            try:
                yield slot
            finally:
                os.close(fd)
            return
        if time.monotonic() > give_up:
            raise TransientEvaluationError("every sandbox slot is busy", retry_after=5)
        time.sleep(0.02)


def slot_uid(slot: int) -> int:
    return BASE_UID + slot
