"""What a language is to the code runner: one small class per language (docs/languages.md).

A language says how its answer and harness become files in the box, how to compile them (if
at all), how to run them, what its runtime needs beyond the defaults, how to read its
compiler's first error, and how to find its version. The sandbox (`evaluation.sandbox`) does
the rest the same way for every language: isolation, limits, the test protocol, the verdict.

A generated harness reads the tests' arguments as one line of tokens on stdin (the shown
tests; a second line, the hidden ones, arrives only after every shown test has reported) and
writes one JSON event per line to stdout, as `evaluation/sandbox/_warden.py` does for Python:
  {"e":"loaded"}   then, per test,
  {"e":"test","i":n,"s":"ok"|"error"|"memory"|"output"|"badvalue","v":<JSON>,"t":ms,"o":"printed","msg":"error"}
  {"e":"done"}
What the answer prints is captured per test by the harness, never mixed into that stream.
"""

from __future__ import annotations

import re
import subprocess
from typing import ClassVar

from evaluation.languages.types import Signature, Type, camel

VERSION_TIMEOUT_S = 20.0

# What every harness holds a run to, in every language: the templates get them filled in
# (`templates.LIMITS`). `evaluation/sandbox/_warden.py` runs standalone in the box and keeps
# its own copy (tests/evaluation/test_harness_templates.py holds it equal).
EXCERPT_CHARS = 1024  # of what a test printed and of a message, as reported
PRINT_LIMIT = 1 << 20  # what the whole run may print (bytes; characters in JavaScript and Python)
VALUE_LIMIT = 1 << 20  # one return value, encoded as JSON
VALUE_DEPTH_LIMIT = 200  # nesting of one return value where its declared type does not bound it


class Language:
    id: ClassVar[str]
    name: ClassVar[str]
    ace_mode: ClassVar[str]  # the editor's highlighting mode, e.g. "ace/mode/python"
    answer_file: ClassVar[str]  # the candidate's file in the box, as the compiler names it
    version_argv: ClassVar[tuple[str, ...]]
    version_pattern: ClassVar[str] = r"(\d+\.\d+(?:\.\d+)?)"
    comment: ClassVar[str] = "//"

    # What runs the answer. True: the sandbox's warden, in its own process (`run_python`,
    # `evaluation/sandbox/_warden.py`); no sources, compile or program of the language's.
    # False: a program, `sources` written to a box, compiled when `compiled`, run as `run_argv`
    # (`evaluation/sandbox/programs.py`).
    in_process: ClassVar[bool] = False
    # The box's limits beyond the question's own (whose CPU limit is for Python-like speed).
    compiled: ClassVar[bool] = True
    # True: only a new process resets the answer's globals, so each test runs in one of its own
    # (evaluation/sandbox/_warden.py, `_supervise`); else the harness resets them in-process.
    fresh_process: ClassVar[bool] = False
    cpu_factor: ClassVar[float] = 1.0
    cpu_extra_s: ClassVar[float] = 0.0  # the runtime's own start-up, before any test
    memory_rlimit: ClassVar[str] = "as"  # "as", or "data" for runtimes that reserve address space
    memory_extra_mb: ClassVar[int] = 64  # the runtime's own memory beside the answer's
    processes: ClassVar[int] = 8  # RLIMIT_NPROC: runtimes count their threads here
    compile_cpu_s: ClassVar[float] = 10.0
    compile_memory_mb: ClassVar[int] = 1024
    compile_processes: ClassVar[int] = 32
    host_paths: ClassVar[tuple[str, ...]] = ()  # read-only paths beyond /usr (e.g. the JDK's /etc)
    # What `prebuild_files` and `prebuild_argvs` made once per machine (evaluation.sandbox.
    # programs.prebuilt_for), given to the compile box read-only; None: compiles do without.
    prebuilt_dir: str | None = None

    def entry_name(self, signature: Signature) -> str:
        return camel(signature.function)

    def param_name(self, name: str) -> str:
        """A parameter as the entry point spells it (signatures name them in snake_case)."""
        return camel(name)

    def written(self, json_text: str) -> str:
        """Values written in JSON (one, or several separated by ", ", possibly cut short, as a
        test's row holds them) in this language's notation: the one place that says how an
        example, a run's case and a result's test write a value. JSON's `true`, `null` and
        `[1, 2]` are already how JavaScript, Java, C++ and Go write them."""
        return json_text

    def entry_point(self, signature: Signature) -> str:
        """The declaration the candidate writes, as the docs and API show it."""
        raise NotImplementedError

    def starter(self, signature: Signature) -> str:
        raise NotImplementedError

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        """Every file the box needs, by name: the answer's file (`answer_file`) and the harness."""
        raise NotImplementedError

    def answer_offset(self, answer: str) -> int:
        """Lines put before the candidate's text in `answer_file` (a package line, imports)."""
        return 0

    def compile_argv(self, box: str) -> list[str]:
        """Run with `box` (the box's directory, writable) as the working directory."""
        raise NotImplementedError

    def compile_env(self, box: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": box}

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        raise NotImplementedError

    def executable(self, box: str) -> str:
        """The one file the run box may execute (besides the dynamic loader), as `run_argv`
        starts it: the compiled program, or the runtime that runs the harness (node, java)."""
        raise NotImplementedError

    def run_env(self, box: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": box}

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        """The compiler's first error as (message, line, column) in the candidate's own text."""
        raise NotImplementedError

    def prebuild_files(self) -> dict[str, str]:
        """Files of the language's own (never the candidate's) that, built once, make every
        compile cheaper: a precompiled header, say. Empty: nothing to build."""
        return {}

    def prebuild_argvs(self, directory: str) -> list[list[str]]:
        """Commands run in order on the host, once `prebuild_files` are in `directory`."""
        return []

    def use_prebuilt(self, directory: str) -> None:
        """Compile against `directory` from now on; the compile box sees it read-only."""
        self.prebuilt_dir = directory
        self.host_paths = (*type(self).host_paths, directory)  # type: ignore[misc]

    def crash_reason(self, stderr: str) -> str | None:
        """'memory' when the runtime's last words say it ran out of memory, else None."""
        return None

    def version(self) -> str | None:
        """The toolchain's version, or None when it is missing or does not start."""
        try:
            done = subprocess.run(
                list(self.version_argv), capture_output=True, env={"PATH": "/usr/bin:/bin"},
                timeout=VERSION_TIMEOUT_S, check=False,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        match = re.search(self.version_pattern, (done.stdout + done.stderr).decode("utf-8", "replace"))
        return match.group(1) if match else None


def first_error(output: str, file: str, offset: int, pattern: str) -> tuple[str, int | None, int | None]:
    """The first `pattern` match (groups: file, line, column or None, message) in a compiler's
    output that names `file`, with the line moved back by `offset`; else the first non-empty line."""
    for match in re.finditer(pattern, output, re.MULTILINE):
        if match.group("file").endswith(file):
            line = int(match.group("line")) - offset
            column = match.group("col")
            return match.group("msg").strip(), line if line > 0 else None, int(column) if column else None
    for match in re.finditer(pattern, output, re.MULTILINE):
        # An error in the generated harness: the answer does not declare what the harness calls.
        return match.group("msg").strip(), None, None
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return (lines[0] if lines else "the compiler failed without saying why"), None, None


def scalar_or_container(kind: Type) -> bool:
    return kind.kind in ("list", "map", "optional")
