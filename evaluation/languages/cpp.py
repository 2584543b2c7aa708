"""C++ (g++, C++17): the answer is `answer.cpp`, included by a harness generated from the signature.

`harness.cpp` (its template in `harness/`, beside the fixed part's) is: the common standard
headers (`PRELUDE_HEADERS`), `using namespace std;`, the harness's machinery (reading the
tests, writing JSON, capturing output), then `#include "answer.cpp"`, then a few lines that
call the answer. g++ therefore names the
candidate's file and lines in its errors, and nothing the answer `#define`s can break the
machinery, which comes before it. Everything is linked statically, so the box runs one file
and needs no dynamic loader or shared library.

An answer that does not declare the function as `entry_point` says (`long long` where `int`
is declared, a `std::vector` of the declared element type, ...) fails a `static_assert` in
the harness whose text is that declaration; `compile_error` reports it without a line.

Compile cost (sum-of-list, -O2): parsing the prelude's headers and generating the harness's
fixed part are most of it. When `prebuilt_dir` holds the prelude precompiled and the fixed
part compiled (`prebuild_files`, `prebuild_argvs`), a compile does neither.
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.templates import fill
from evaluation.languages.types import Signature, Type, camel

PROGRAM = "program"
HARNESS_FILE = "harness.cpp"
SUPPORT_SOURCE = "interviewprep_support.cpp"
SUPPORT_OBJECT = "interviewprep_support.o"
PRELUDE_NAME = "interviewprep_prelude.h"
# Same flags for the precompiled prelude and every compile: g++ ignores a PCH built with others.
CXXFLAGS = ("-std=c++17", "-O2")
# The headers an interview answer commonly needs, without <bits/stdc++.h> (twice the compile
# time). <csignal>, <thread> and <random> are left out: each costs compile time, and
# <csignal> declares POSIX's read, write, link ... at global scope, where a global of the
# answer's own could collide with them. <charconv>, <chrono> and <cxxabi.h> the harness needs.
PRELUDE_HEADERS = (
    "algorithm", "array", "bitset", "cassert", "cctype", "charconv", "chrono", "climits",
    "cmath", "cstdint", "cstdio", "cstdlib", "cstring", "cxxabi.h", "deque", "functional",
    "iostream", "iterator", "limits", "list", "map", "memory", "numeric", "optional", "queue",
    "set", "sstream", "stack", "stdexcept", "string", "string_view", "tuple", "unordered_map",
    "unordered_set", "utility", "vector",
)  # fmt: skip
_SCALARS = {"int": "long long", "float": "double", "string": "std::string", "bool": "bool"}
MUST_DEFINE = "answer.cpp must define "
# g++ diagnostics: "file:line:col: error: message" ("fatal error" for a missing #include).
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<level>fatal error|error): (?P<msg>.*)$"
)
_LOCATION = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s")
_UNCLOSED = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): note: to match this (?P<what>.+)$", re.MULTILINE
)
_UNDEFINED = re.compile(r"undefined reference to [`'](?P<what>[^'\n]+)'")


def cpp_type(kind: Type) -> str:
    if kind.kind == "list":
        return f"std::vector<{cpp_type(kind.item)}>"  # type: ignore[arg-type]
    if kind.kind == "map":
        return f"std::map<std::string, {cpp_type(kind.item)}>"  # type: ignore[arg-type]
    if kind.kind == "optional":
        return f"std::optional<{cpp_type(kind.item)}>"  # type: ignore[arg-type]
    return _SCALARS[kind.kind]


def cpp_parameter(kind: Type) -> str:
    """Scalars (string included) by value, containers by const reference."""
    return cpp_type(kind) if kind.kind in _SCALARS else f"const {cpp_type(kind)}&"


def prelude_header() -> str:
    return "".join(f"#include <{header}>\n" for header in PRELUDE_HEADERS)


# The harness's fixed part (in harness/): `support.h` says what `harness.cpp` (and the answer)
# may call of it, `support.cpp` is its code, compiled once per worker into support.o when
# `prebuilt_dir` is set, else part of every harness.cpp. In namespace ip_harness_, with only
# qualified std:: names, so the answer's own globals and `using namespace std;` change nothing
# in it. `harness.cpp` is the per-question part around the answer: the declared types,
# containers read and written by overloads on them, and the checks that the answer declares
# the function as asked.
def support(*, code: bool) -> str:
    """The fixed part: its declarations, then (with `code`) its code."""
    declarations = fill("support.h", {})
    return f"{declarations}\n{fill('support.cpp', {})}" if code else declarations


class Cpp(Language):
    id: ClassVar[str] = "cpp"
    name: ClassVar[str] = "C++"
    ace_mode: ClassVar[str] = "ace/mode/c_cpp"
    answer_file: ClassVar[str] = "answer.cpp"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/g++", "--version")
    fresh_process: ClassVar[bool] = True  # globals reset only in a new process: one per test

    cpu_factor: ClassVar[float] = 1.0
    cpu_extra_s: ClassVar[float] = 0.0
    memory_rlimit: ClassVar[str] = "as"
    memory_extra_mb: ClassVar[int] = 32  # the static binary itself, its stack and the tests' text
    compile_cpu_s: ClassVar[float] = 10.0
    compile_memory_mb: ClassVar[int] = 1024
    compile_processes: ClassVar[int] = 16

    def entry_point(self, signature: Signature) -> str:
        params = ", ".join(f"{cpp_parameter(p.type)} {camel(p.name)}" for p in signature.params)
        return f"{cpp_type(signature.returns)} {self.entry_name(signature)}({params})"

    def starter(self, signature: Signature) -> str:
        return f"{self.entry_point(signature)} {{\n    // {signature.summary}\n    return {{}};\n}}\n"

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        # With `prebuilt_dir`, the prelude's .gch is found beside it and support.o is linked.
        prelude = f"#include <{PRELUDE_NAME}>\n" if self.prebuilt_dir else prelude_header()
        harness = fill(
            HARNESS_FILE,
            {
                "NAME": self.entry_name(signature),
                "PRELUDE": prelude,
                "SUPPORT": support(code=not self.prebuilt_dir),
                "RET": cpp_type(signature.returns),
                "ARGS": ", ".join(cpp_type(p.type) for p in signature.params),
                "MUST": f"{MUST_DEFINE}`{self.entry_point(signature)}`",
                "CALL_ARGS": ", ".join(f"std::get<{n}>(ip_args_)" for n in range(len(signature.params))),
            },
        )
        return {self.answer_file: answer, HARNESS_FILE: harness}

    def compile_argv(self, box: str) -> list[str]:
        prebuilt = []
        if self.prebuilt_dir:
            prebuilt = ["-I", self.prebuilt_dir, os.path.join(self.prebuilt_dir, SUPPORT_OBJECT)]
        return [
            "/usr/bin/g++", *CXXFLAGS, "-pipe", "-static", "-fuse-ld=gold", "-w",
            "-fdiagnostics-column-unit=byte", "-fdiagnostics-color=never", "-fmax-errors=20",
            "-o", PROGRAM, HARNESS_FILE, *prebuilt,
        ]  # fmt: skip

    def compile_env(self, box: str) -> dict[str, str]:
        # The driver's temporary files (the object file) go to the box, not the small /tmp.
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": box, "TMPDIR": box}

    def executable(self, box: str) -> str:
        return os.path.realpath(os.path.join(box, PROGRAM))

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        return [self.executable(box)]

    def prebuild_files(self) -> dict[str, str]:
        """The files to write into the prebuilt directory before running `prebuild_argvs`."""
        return {
            PRELUDE_NAME: prelude_header(),
            SUPPORT_SOURCE: f"#include <{PRELUDE_NAME}>\n\n{support(code=True)}",
        }

    def prebuild_argvs(self, directory: str) -> list[list[str]]:
        """Commands to run in order (any working directory) once `prebuild_files` are in
        `directory`: the precompiled prelude, then the fixed part's object file."""
        header = os.path.join(directory, PRELUDE_NAME)
        return [
            ["/usr/bin/g++", *CXXFLAGS, "-x", "c++-header", "-o", header + ".gch", header],
            ["/usr/bin/g++", *CXXFLAGS, "-I", directory, "-c", "-o", os.path.join(directory, SUPPORT_OBJECT),
             os.path.join(directory, SUPPORT_SOURCE)],
        ]  # fmt: skip

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        lines = output.splitlines()
        answer_lines = re.split(r"\r\n|\r|\n", answer)  # g++'s line ends
        for position, text in enumerate(lines):
            match = _DIAGNOSTIC.match(text)
            if match is None:
                continue
            message = match.group("msg").strip()
            if os.path.basename(match.group("file")) == self.answer_file:
                return message, *self._place(match, answer_lines)
            # An error inside a standard header that the answer's code instantiated: the
            # "required from here" lines before it name the answer's own line.
            for before in reversed(lines[:position]):
                if _DIAGNOSTIC.match(before):
                    break
                place = _LOCATION.match(before)
                if place and os.path.basename(place.group("file")) == self.answer_file:
                    return message, *self._place(place, answer_lines)
            # The answer left a bracket open, so the harness's own code was read inside it.
            for note in _UNCLOSED.finditer(output):
                if os.path.basename(note.group("file")) == self.answer_file:
                    return f"this {note.group('what').strip()} is never closed", *self._place(note, answer_lines)
            if MUST_DEFINE in message:  # the harness's static_assert
                return message[message.index(MUST_DEFINE) :], None, None
            declared = output.find(MUST_DEFINE)  # the call's line, as g++ quotes it
            if declared >= 0:
                end = output.find("`", output.find("`", declared) + 1)
                return output[declared : end + 1] if end > declared else message, None, None
            return message, None, None
        undefined = _UNDEFINED.search(output)
        if undefined:
            return f"undefined reference to `{undefined.group('what')}` (declared but never defined?)", None, None
        text = [line.strip() for line in lines if line.strip()]
        return (text[0] if text else "the compiler failed without saying why"), None, None

    @staticmethod
    def _place(match: re.Match[str], answer_lines: list[str]) -> tuple[int | None, int | None]:
        """The line, and the column in characters (g++ counts bytes), in the answer's text."""
        line = int(match.group("line"))
        if not 1 <= line <= max(len(answer_lines), 1):
            return None, None
        column = match.group("col")
        if column is None:
            return line, None
        source = answer_lines[line - 1].encode("utf-8") if line <= len(answer_lines) else b""
        return line, len(source[: int(column) - 1].decode("utf-8", "replace")) + 1

    def crash_reason(self, stderr: str) -> str | None:
        return "memory" if "std::bad_alloc" in stderr else None
