"""Go: the answer is compiled with a harness generated from the question's signature.

The box holds `answer.go` (the candidate's text, `package main` put first when it has none)
and `harness.go` (package main: `func main`, the input readers and JSON writers for the
signature's types; its template is `harness/harness.go`). Every identifier the harness
declares, imports included, starts with `ipHarness` so that no name an answer may declare at
package level clashes with it.

Compiling: `go tool compile` then `go tool link` take ~0.1 s of CPU against ~0.25 s for
`go build`, which hashes the standard library's sources on every cold-cache run. Debian's
standard library is installed precompiled (with cgo), so a static link works unless the
answer imports a package built with cgo (net, os/user); `link -d` refuses those and the
script then falls back to `go build`, which rebuilds them without cgo (~1.3 s).
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.templates import fill
from evaluation.languages.types import Signature, Type

GOROOT = "/usr/lib/go-1.19"
TOOLS = f"{GOROOT}/pkg/tool/linux_amd64"
PROGRAM = "answer-program"
HARNESS_FILE = "harness.go"
# The harness's reference to the entry point sits under a //line directive naming this
# "file", so the compiler's message for a missing or mistyped function carries the expected
# declaration (compile_error() gets only the compiler's output and the answer).
EXPECTED_MARK = "expected "

_SCALARS = {"int": "int64", "float": "float64", "string": "string", "bool": "bool"}
_PACKAGE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*package\b", re.DOTALL)
# go tool compile writes "answer.go:3:5: msg"; go build (the fallback) "./answer.go:3:5: msg".
_ERROR = re.compile(
    r"^(?P<file>[^\n]*?\.go|expected [^\n]*?):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>[^\n]*)", re.MULTILINE
)
_OTHER_DECLARATION = re.compile(
    r"^\s+(?:\./)?answer\.go:(?P<line>\d+):(?P<col>\d+): other declaration of (?P<name>\w+)", re.MULTILINE
)


def go_type(kind: Type) -> str:
    if kind.kind == "list":
        return "[]" + go_type(kind.item)  # type: ignore[arg-type]
    if kind.kind == "map":
        return "map[string]" + go_type(kind.item)  # type: ignore[arg-type]
    if kind.kind == "optional":
        return "*" + go_type(kind.item)  # type: ignore[arg-type]
    return _SCALARS[kind.kind]


def _suffix(kind: Type) -> str:
    """A name for `kind` inside generated function names: list<int> -> ListInt."""
    if kind.item is None:
        return kind.kind.capitalize()
    return {"list": "List", "map": "Map", "optional": "Opt"}[kind.kind] + _suffix(kind.item)


def _all_types(kind: Type, into: dict[str, Type]) -> None:
    """`kind` and every type inside it, innermost first, keyed by suffix (each generated once)."""
    if kind.item is not None:
        _all_types(kind.item, into)
    into.setdefault(_suffix(kind), kind)


def _reader(kind: Type) -> str:
    name, go = _suffix(kind), go_type(kind)
    head = f"func ipHarnessRead{name}() {go} {{\n"
    if kind.kind == "int":
        return head + "\treturn ipHarnessInt()\n}\n"
    if kind.kind == "float":
        return head + "\treturn ipHarnessFloat()\n}\n"
    if kind.kind == "bool":
        return head + "\treturn ipHarnessInt() != 0\n}\n"
    if kind.kind == "string":
        return head + "\treturn ipHarnessString()\n}\n"
    item = _suffix(kind.item)  # type: ignore[arg-type]
    if kind.kind == "list":
        body = f"\tv := make({go}, ipHarnessInt())\n\tfor i := range v {{\n\t\tv[i] = ipHarnessRead{item}()\n\t}}\n"
    elif kind.kind == "map":
        body = (
            f"\tn := ipHarnessInt()\n\tv := make({go}, n)\n\tfor ; n > 0; n-- {{\n"
            f"\t\tkey := ipHarnessString()\n\t\tv[key] = ipHarnessRead{item}()\n\t}}\n"
        )
    else:  # optional: a 0/1 flag, then the value
        body = f"\tif ipHarnessInt() == 0 {{\n\t\treturn nil\n\t}}\n\tv := ipHarnessRead{item}()\n\treturn &v\n}}\n"
        return head + body
    return head + body + "\treturn v\n}\n"


def _writer(kind: Type) -> str:
    name, go = _suffix(kind), go_type(kind)
    head = f"func ipHarnessWrite{name}(b []byte, v {go}) []byte {{\n"
    if kind.kind == "int":
        return head + "\treturn ipHarnessStrconv.AppendInt(b, v, 10)\n}\n"
    if kind.kind == "float":
        return head + "\treturn ipHarnessFloatJSON(b, v)\n}\n"
    if kind.kind == "bool":
        return head + "\treturn ipHarnessStrconv.AppendBool(b, v)\n}\n"
    if kind.kind == "string":
        return head + "\treturn ipHarnessStringJSON(b, v, -1)\n}\n"
    item = _suffix(kind.item)  # type: ignore[arg-type]
    if kind.kind == "list":  # a nil slice is an empty list, as Go code treats it
        body = (
            "\tb = append(b, '[')\n\tfor i, item := range v {\n\t\tif i > 0 {\n\t\t\tb = append(b, ',')\n\t\t}\n"
            f"\t\tb = ipHarnessWrite{item}(b, item)\n\t}}\n\treturn append(b, ']')\n}}\n"
        )
    elif kind.kind == "map":  # keys sorted so that the same map always reads the same
        body = (
            "\tkeys := make([]string, 0, len(v))\n\tfor key := range v {\n\t\tkeys = append(keys, key)\n\t}\n"
            "\tipHarnessSort.Strings(keys)\n\tb = append(b, '{')\n\tfor i, key := range keys {\n"
            "\t\tif i > 0 {\n\t\t\tb = append(b, ',')\n\t\t}\n\t\tb = ipHarnessStringJSON(b, key, -1)\n"
            f"\t\tb = append(b, ':')\n\t\tb = ipHarnessWrite{item}(b, v[key])\n\t}}\n\treturn append(b, '}}')\n}}\n"
        )
    else:
        body = f'\tif v == nil {{\n\t\treturn append(b, "null"...)\n\t}}\n\treturn ipHarnessWrite{item}(b, *v)\n}}\n'
    return head + body


class Go(Language):
    id: ClassVar[str] = "go"
    name: ClassVar[str] = "Go"
    ace_mode: ClassVar[str] = "ace/mode/golang"
    answer_file: ClassVar[str] = "answer.go"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/go", "version")
    version_pattern: ClassVar[str] = r"go(\d+\.\d+(?:\.\d+)?)"
    fresh_process: ClassVar[bool] = True  # globals reset only in a new process: one per test

    cpu_extra_s: ClassVar[float] = 0.1
    # RLIMIT_AS would count the runtime's address-space reservations; RLIMIT_DATA counts what
    # it maps for use. Go does not start under ~48 MiB of data (its heap arena index).
    memory_rlimit: ClassVar[str] = "data"
    memory_extra_mb: ClassVar[int] = 64
    # GOMAXPROCS=1 runs 3-5 threads (main, sysmon, one blocked in read, GC); room for more.
    processes: ClassVar[int] = 16
    compile_cpu_s: ClassVar[float] = 20.0  # the go build fallback rebuilds net (~1.3 s here)
    compile_memory_mb: ClassVar[int] = 1024
    compile_processes: ClassVar[int] = 32

    def entry_point(self, signature: Signature) -> str:
        params = ", ".join(f"{self.param_name(p.name)} {go_type(p.type)}" for p in signature.params)
        return f"func {self.entry_name(signature)}({params}) {go_type(signature.returns)}"

    def starter(self, signature: Signature) -> str:
        # A return of the zero value keeps the starter compiling (Go refuses a missing return).
        zero = {"int64": "0", "float64": "0", "string": '""', "bool": "false"}.get(go_type(signature.returns), "nil")
        return f"{self.entry_point(signature)} {{\n\t// {signature.summary}\n\treturn {zero}\n}}\n"

    def answer_offset(self, answer: str) -> int:
        return 0 if _PACKAGE.match(answer) else 1

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        offset = self.answer_offset(answer)
        return {
            self.answer_file: ("package main\n" if offset else "") + answer,
            HARNESS_FILE: self.harness(signature, offset),
        }

    def harness(self, signature: Signature, offset: int) -> str:
        types: dict[str, Type] = {}
        for param in signature.params:
            _all_types(param.type, types)
        readers = "".join(_reader(kind) + "\n" for kind in types.values())
        returned: dict[str, Type] = {}
        _all_types(signature.returns, returned)
        writers = "".join(_writer(kind) + "\n" for kind in returned.values())
        names = [f"ipHarnessArg{n}" for n in range(len(signature.params))]
        read_args = "\n".join(
            f"\t{name} := ipHarnessRead{_suffix(p.type)}()" for name, p in zip(names, signature.params, strict=True)
        )
        params = ", ".join(f"{name} {go_type(p.type)}" for name, p in zip(names, signature.params, strict=True))
        entry_type = "func(" + ", ".join(
            f"{self.param_name(p.name)} {go_type(p.type)}" for p in signature.params
        ) + ") " + go_type(signature.returns)  # fmt: skip
        values = {
            "SORT": '\tipHarnessSort "sort"\n' if "map" in str(signature.returns) else "",
            "OFFSET": str(offset),
            "READ_ARGS": read_args,
            "ARGS": ", ".join(names),
            "PARAMS": params,
            "RETURN": _suffix(signature.returns),
            "RETURN_TYPE": go_type(signature.returns),
            "READERS": readers,
            "WRITERS": writers,
            "EXPECTED": EXPECTED_MARK + self.entry_point(signature),
            "ENTRY_TYPE": entry_type,
            "ENTRY": self.entry_name(signature),
        }
        return fill(HARNESS_FILE, values)

    def compile_argv(self, box: str) -> list[str]:
        # The box has no /dev: a failed link's errors (a cgo-built package) go to link.log.
        script = (
            f"{TOOLS}/compile -o answer.a -p main -complete -pack {self.answer_file} {HARNESS_FILE}"
            f" && {{ {TOOLS}/link -d -s -w -o {PROGRAM} answer.a >link.log 2>&1"
            f" || /usr/bin/go build -ldflags='-s -w' -o {PROGRAM} {self.answer_file} {HARNESS_FILE}; }}"
        )
        return ["/usr/bin/sh", "-c", script]

    def compile_env(self, box: str) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "HOME": box,
            "GOROOT": GOROOT,
            "GOCACHE": f"{box}/.gocache",
            "GOPATH": f"{box}/.gopath",
            "GOTMPDIR": box,
            "CGO_ENABLED": "0",
            "GO111MODULE": "off",
        }

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        # memory_mb includes memory_extra_mb; the harness's soft heap limit is the question's own.
        return [self.executable(box), str(max(memory_mb - self.memory_extra_mb, 16))]

    def run_env(self, box: str) -> dict[str, str]:
        # One P: the harness is sequential, and a second one mostly adds GC threads and CPU.
        # GOTRACEBACK=none: a fatal error's stderr is its reason, not pages of stacks.
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": box, "GOMAXPROCS": "1", "GOTRACEBACK": "none"}

    def executable(self, box: str) -> str:
        return os.path.realpath(os.path.join(box, PROGRAM))

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        offset = self.answer_offset(answer)
        first_harness: tuple[str, int | None, int | None] | None = None
        for match in _ERROR.finditer(output):
            file, message = match.group("file"), match.group("msg").strip()
            column = int(match.group("col")) if match.group("col") else None
            if os.path.basename(file) == self.answer_file:
                line = int(match.group("line")) - offset
                if line <= 0:  # the package line we added: the answer's text is not Go
                    return message, None, None
                return message, line, column
            if first_harness is not None:
                continue
            if file.startswith(EXPECTED_MARK):
                declaration = file[len(EXPECTED_MARK) :]
                first_harness = (f"the answer must declare {declaration} ({message})", None, None)
            elif message.startswith("package main; expected "):
                # The answer's own package clause names another package than the harness's.
                clause = _PACKAGE.match(answer)
                where = answer[: clause.end()] if clause else ""
                line = where.count("\n") + 1 if clause else None
                column = len(where) - where.rfind("\n") - len("package") if clause else None
                return "the answer must be in package main (or leave the package line out)", line, column
            elif "redeclared" in message and (other := _OTHER_DECLARATION.search(output, match.end())):
                # The answer declares a name the harness declares too: only main can clash.
                name, line = other.group("name"), int(other.group("line")) - offset
                text = f"{name} redeclared: the test harness declares {name}; leave it out of your answer"
                return text, line if line > 0 else None, int(other.group("col"))
            else:
                first_harness = (message, None, None)
        if first_harness is not None:
            return first_harness
        lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("#")]
        return (lines[0] if lines else "the compiler failed without saying why"), None, None

    def crash_reason(self, stderr: str) -> str | None:
        # "fatal error: runtime: out of memory", "...: cannot allocate memory", "pageAlloc: out of memory"
        if re.search(r"^fatal error: .*(?:out of memory|cannot allocate memory)", stderr, re.MULTILINE):
            return "memory"
        return None
