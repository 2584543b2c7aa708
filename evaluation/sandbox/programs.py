"""Answers in a compiled or separately run language: compile in one box, run in another.

Both boxes run the same warden (`_warden.py`) with the same layers as a Python answer;
instead of running the answer itself, the warden sets every layer up and then execs
the compiler, or the program (the answer with its generated harness). The two share one slot
(one uid) and one private directory on the host, created for this answer and removed after:
  compile: the directory writable at /box, processes and exec allowed (a compiler driver
           starts its passes), no sockets; its own CPU, memory and wall limits.
  run:     the directory read-only, /tmp a small tmpfs, no new process, and exec only of the
           one program (Landlock), the question's limits scaled for the runtime. For a
           language whose globals only a new process resets (C++, Go: `fresh_process`), the
           warden stays as a supervisor and execs the program once per test, the CPU limit
           shared by all of them (`_warden.py`, `_supervise`).
Compile time and run time are limited and reported apart. A compiled answer's directory is
kept, keyed by the hash of its sources, the toolchain's version and the compile command, so the
same code compiles once (a Run, then a Submit); only identical sources share an entry, and it
only ever runs in a box. Host-side files are created with
O_CREAT|O_EXCL|O_NOFOLLOW in a directory only this slot's uid can enter.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import math
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from evaluation.evaluators.base import PermanentEvaluationError, TransientEvaluationError
from evaluation.languages import LANGUAGES, Language, Signature, encode_tests, language_versions
from evaluation.languages.base import PRINT_LIMIT
from evaluation.sandbox.launch import Bind, Layers, RawRun, launch
from evaluation.sandbox.modes import layers_for
from evaluation.sandbox.request import BoxRequest, ProgramExec, framed
from evaluation.sandbox.runner import (
    MAX_CPU_LIMIT_S,
    BoxRun,
    box_run_read,
    release_after,
    wall_limit_for,
)
from evaluation.sandbox.slots import owned_directory, slot_held, slot_uid

logger = logging.getLogger(__name__)

BOX = "/box"  # where the box sees its directory, with bwrap
COMPILE_FILE_BYTES = 64 << 20
RUN_FILE_BYTES = PRINT_LIMIT  # a language's harness caps what the answer prints at this
OUTPUT_KEEP = 4096


@dataclass(frozen=True)
class Compiled:
    ok: bool
    ended: str  # completed, failed (the compiler refused the answer), timeout, memory, crashed
    message: str  # the first error, in the candidate's terms ("" when ok)
    line: int | None
    column: int | None
    cpu_s: float
    wall_s: float


@dataclass(frozen=True)
class ProgramRun:
    language: str
    version: str | None
    compiled: Compiled | None  # None for a language that is not compiled
    run: BoxRun | None  # None when the compile failed


def _scratch_root() -> str:
    """A directory of this user's that others may cross but not list, for the boxes' own."""
    path = os.path.join("/var/tmp", f"interviewprep-box-{os.geteuid()}")  # noqa: S108 - checked there
    return owned_directory(path, 0o711, "scratch directory")


def _write_new(directory: str, name: str, text: str) -> None:
    if "/" in name or name.startswith("."):
        raise PermanentEvaluationError(f"a source file name {name!r} is not a plain name")
    fd = os.open(
        os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
    )
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@cache
def _loaders() -> tuple[str, ...]:
    """The dynamic loader(s) a dynamically linked program needs to execute."""
    found = {
        os.path.realpath(p) for pattern in ("/lib64/ld-linux*.so*", "/lib/ld-linux*.so*") for p in glob.glob(pattern)
    }
    return tuple(sorted(found))


def _compile(language: Language, layers: Layers, slot: int, host_dir: str, box: str, answer: str) -> Compiled:
    host_paths = [[path, "r"] for path in language.host_paths]
    compiler = ProgramExec(
        argv=language.compile_argv(box),
        env=language.compile_env(box),
        cwd=box,
        rules=[["/usr", "x"], [box, "rw"], ["/tmp", "rw"], *host_paths],  # noqa: S108 - the box's own
        memory=language.memory_rlimit,
        processes=language.compile_processes,
        file_bytes=COMPILE_FILE_BYTES,
        results_on_stdout=False,
    )
    raw: RawRun = launch(
        layers,
        BoxRequest(exec=compiler),
        cpu_limit_s=language.compile_cpu_s,
        memory_bytes=language.compile_memory_mb << 20,
        wall_s=wall_limit_for(language.compile_cpu_s),
        profile="compile",
        binds=(Bind(host_dir, BOX, writable=True), *(Bind(p, p) for p in language.host_paths)),
        slot=slot,
    )
    ready = next((n for n, event in enumerate(raw.events) if event["e"] == "ready"), None)
    failed_to_start = ready is None or any(e["e"] in ("setup_error", "exec_error") for e in raw.events)
    if failed_to_start:
        why = next((e.get("msg") for e in raw.events if e.get("msg")), None) or raw.stderr_head[:300].decode(
            "utf-8", "replace"
        )
        raise TransientEvaluationError(f"the compile box ({layers.name}) did not start: {why}")
    output = (raw.stdout_head + b"\n" + raw.stderr_head).decode("utf-8", "replace").strip()
    facts = {"cpu_s": raw.cpu_s, "wall_s": raw.wall_s}
    if raw.killed == "wall" or raw.cpu_s >= language.compile_cpu_s * 0.95:
        limit = f"{language.compile_cpu_s:g} s"
        return Compiled(False, "timeout", f"compiling took longer than the {limit} allowed", None, None, **facts)
    if raw.exit_code == 0:
        return Compiled(True, "completed", "", None, None, **facts)
    if raw.signal is not None or "out of memory" in output.lower() or "virtual memory exhausted" in output:
        return Compiled(
            False,
            "memory" if raw.signal is None else "crashed",
            "the compiler ran out of memory or crashed",
            None,
            None,
            **facts,
        )
    message, line, column = language.compile_error(output[:OUTPUT_KEEP], answer)
    return Compiled(False, "failed", message, line, column, **facts)


PREBUILD_TIMEOUT_S = 300.0
CACHE_ENTRIES = 256  # compiled answers kept, the least recently used dropped first
CACHE_ENTRY_BYTES = 64 << 20


def _cache_key(language: Language, version: str, sources: dict[str, str]) -> str:
    return hashlib.sha256(
        repr(
            (language.id, version, language.prebuilt_dir, language.compile_argv(BOX), sorted(sources.items()))
        ).encode()
    ).hexdigest()


def _compiled_dir() -> str:
    path = os.path.join(_scratch_root(), "compiled")
    os.makedirs(path, 0o711, exist_ok=True)
    return path


def _cached(key: str) -> str | None:
    path = os.path.join(_compiled_dir(), key)
    try:
        os.utime(path)  # most recently used
    except OSError:  # not kept, or dropped: compile it
        return None
    return path


def _cache_store(host_dir: str, key: str) -> None:
    """Keep a compiled answer's directory, once its boxes are gone, for the same sources next
    time (a Run then a Submit of the same code): only its regular files and folders, owned by
    this user and readable by every slot's uid; anything else the compile left is dropped."""
    total = 0
    for root, directories, names in os.walk(host_dir):
        for name in directories + names:
            path = os.path.join(root, name)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                mode = 0o755
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                mode = 0o755 if info.st_mode & 0o100 else 0o644
            else:
                os.unlink(path)  # a symlink or a pipe: never followed, never kept
                continue
            os.lchown(path, os.geteuid(), os.getegid())
            os.chmod(path, mode)
    if total > CACHE_ENTRY_BYTES:
        return
    os.lchown(host_dir, os.geteuid(), os.getegid())
    os.chmod(host_dir, 0o755)  # noqa: S103 - read by every slot's uid; nothing in it is secret
    try:
        os.rename(host_dir, os.path.join(_compiled_dir(), key))
    except OSError:
        return  # another worker stored the same sources first
    entries = []
    for entry in os.scandir(_compiled_dir()):
        try:
            entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
        except FileNotFoundError:
            continue  # another worker dropped it a moment ago
    for _, path in sorted(entries)[:-CACHE_ENTRIES]:
        shutil.rmtree(path, ignore_errors=True)


@cache
def prebuilt_for(language_id: str) -> str | None:
    """Build what the language's compiles share (`Language.prebuild_files`), once per machine
    and toolchain, and make the language use it; the directory, or None when there is nothing
    to build or the build failed (compiles then do without, slower). Only the language's own
    files are built, on the host, before any candidate code exists. A worker calls this at
    start (`languages_prepare`); its children inherit the answer."""
    language = LANGUAGES[language_id]
    files = language.prebuild_files()
    version = language_versions().get(language_id)
    if not files or version is None:
        return None
    key = hashlib.sha256(repr((version, sorted(files.items()), language.prebuild_argvs("/"))).encode()).hexdigest()
    final = os.path.join(_scratch_root(), f"prebuilt-{language_id}-{key[:16]}")
    if not os.path.isdir(final):
        # Built aside and renamed into place, so concurrent workers never see half of it.
        building = tempfile.mkdtemp(prefix=f"building-{language_id}-", dir=_scratch_root())
        try:
            for name, text in files.items():
                _write_new(building, name, text)
            for argv in language.prebuild_argvs(building):
                subprocess.run(
                    argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, cwd=building, check=True,
                    capture_output=True, timeout=PREBUILD_TIMEOUT_S,
                )  # fmt: skip
            # Readable by every slot's uid: the compile boxes read it; nothing in it is secret.
            for root, directories, names in os.walk(building):
                for name in directories:
                    os.chmod(os.path.join(root, name), 0o755)  # noqa: S103
                for name in names:
                    os.chmod(os.path.join(root, name), 0o644)
            os.chmod(building, 0o755)  # noqa: S103
            os.rename(building, final)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(building, ignore_errors=True)
            if not os.path.isdir(final):  # not another worker's rename winning the race
                logger.warning("%s: prebuilding failed, compiles do without: %s", language.name, exc)
                return None
    language.use_prebuilt(final)
    return final


def languages_prepare() -> None:
    """What a worker does at start for every language it has: its prebuilt files."""
    for language_id, version in language_versions().items():
        if version is not None:
            prebuilt_for(language_id)


def _run_tests(
    language: Language, layers: Layers, slot: int, program_dir: str, run_cpu: float, memory_mb: int,
    shown_lines: list[bytes], hidden_lines: list[bytes], shown: int,
) -> RawRun:  # fmt: skip
    """One box for every test: the program runs once for them all, or, for a language whose
    state only a new process resets (`fresh_process`), once per test under the warden."""
    box = BOX if layers.bwrap else program_dir
    executable = language.executable(box)
    rules = [["/usr", "r"], [box, "r"], ["/tmp", "rw"], [executable, "x"]]  # noqa: S108 - the box's own
    rules += [[loader, "x"] for loader in _loaders()] + [[path, "r"] for path in language.host_paths]
    program = ProgramExec(
        argv=language.run_argv(box, memory_mb),
        env=language.run_env(box),
        cwd=box,
        rules=rules,
        memory=language.memory_rlimit,
        processes=language.processes,
        file_bytes=RUN_FILE_BYTES,
        results_on_stdout=True,
        per_test=language.fresh_process,
    )
    if language.fresh_process:  # the warden starts the program for each line, each one test
        request = BoxRequest(exec=program, tests=shown_lines, more=len(hidden_lines))
        stdin_tail, later, profile = b"", framed(hidden_lines) if hidden_lines else None, "supervisor"
    else:  # the program reads the one line of the shown tests, then that of the hidden ones
        request = BoxRequest(exec=program)
        stdin_tail, later, profile = shown_lines[0], hidden_lines[0] if hidden_lines else None, "program"
    return launch(
        layers,
        request,
        cpu_limit_s=run_cpu,
        memory_bytes=memory_mb << 20,
        wall_s=wall_limit_for(run_cpu),
        profile=profile,
        binds=(Bind(program_dir, BOX), *(Bind(p, p) for p in language.host_paths)),
        stdin_tail=stdin_tail,
        later=later,
        release=release_after(shown),
        slot=slot,
    )


def run_program(
    *,
    language: Language,
    signature: Signature,
    answer: str,
    tests_args: Sequence[Sequence[Any]],
    cpu_limit_s: float,
    memory_limit_mb: int,
    hidden_args: Sequence[Sequence[Any]] = (),
    mode: str | None = None,
) -> ProgramRun:
    """Compile (if the language is compiled) and run every test of one answer.

    As `run_python`: shown tests first, hidden ones sent only once every shown test has
    reported, expected values never sent. `cpu_limit_s` and `memory_limit_mb` are the
    question's; the language scales them for its runtime.
    """
    version = language_versions().get(language.id)
    if version is None:
        raise PermanentEvaluationError(f"{language.name} is not installed on this worker")
    prebuilt_for(language.id)
    layers = layers_for(mode)
    run_cpu = cpu_limit_s * language.cpu_factor + language.cpu_extra_s
    if not 0 < run_cpu <= MAX_CPU_LIMIT_S or not math.isfinite(run_cpu):
        raise PermanentEvaluationError(f"cpu limit {run_cpu} outside (0, {MAX_CPU_LIMIT_S}]")
    if language.fresh_process:
        shown_lines = [encode_tests(signature, [args]) for args in tests_args]
        hidden_lines = [encode_tests(signature, [args]) for args in hidden_args]
    else:
        shown_lines = [encode_tests(signature, tests_args)]
        hidden_lines = [encode_tests(signature, hidden_args)] if hidden_args else []
    sources = language.sources(signature, answer)
    memory_mb = int(memory_limit_mb) + language.memory_extra_mb

    key = _cache_key(language, version, sources) if language.compiled else None
    with slot_held() as slot:
        # One directory per slot, emptied by whoever takes the slot: a worker killed mid-run
        # leaves its files only until the slot's next run.
        host_dir = os.path.join(_scratch_root(), f"slot-{slot}")
        shutil.rmtree(host_dir, ignore_errors=True)
        cached = _cached(key) if key else None
        try:
            if cached is not None:
                compiled: Compiled | None = Compiled(True, "cached", "", None, None, 0.0, 0.0)
                program_dir = cached
            else:
                os.mkdir(host_dir, 0o700)
                for name, text in sources.items():
                    _write_new(host_dir, name, text)
                if layers.uid:
                    os.chown(host_dir, slot_uid(slot), slot_uid(slot))
                box = BOX if layers.bwrap else host_dir
                compiled = _compile(language, layers, slot, host_dir, box, answer) if language.compiled else None
                if compiled is not None and not compiled.ok:
                    return ProgramRun(language.id, version, compiled, None)
                program_dir = host_dir
            raw = _run_tests(
                language, layers, slot, program_dir, run_cpu, memory_mb, shown_lines, hidden_lines, len(tests_args)
            )
            if key is not None and cached is None:
                try:
                    _cache_store(host_dir, key)
                except OSError as exc:  # keeping it is only a saving: never fail the answer for it
                    logger.warning("%s: a compiled answer was not kept: %s", language.name, exc)
        finally:
            shutil.rmtree(host_dir, ignore_errors=True)
    run = box_run_read(
        layers,
        raw,
        shown=len(tests_args),
        total=len(tests_args) + len(hidden_args),
        cpu_limit_s=run_cpu,
        memory_bytes=memory_mb << 20,
        crash_reason=language.crash_reason,
    )
    return ProgramRun(language.id, version, compiled, run)
