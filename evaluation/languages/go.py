"""Go: the answer is compiled with a harness generated from the question's signature.

The box holds `answer.go` (the candidate's text, `package main` put first when it has none)
and `harness.go` (package main: `func main`, the input readers and JSON writers for the
signature's types). Every identifier the harness declares, imports included, starts with
`ipHarness` so that no name an answer may declare at package level clashes with it.

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


_TEMPLATE = """\
package main

// Generated test harness: reads each test's arguments from stdin (see encode_tests), calls
// the answer once per test and writes one JSON event per line to the events descriptor (a
// copy of fd 1 taken before fd 1 is pointed at a capture file for what the answer prints).

import (
	ipHarnessBufio "bufio"
	ipHarnessMath "math"
	ipHarnessOs "os"
	ipHarnessRuntime "runtime"
	ipHarnessDebug "runtime/debug"
__SORT__	ipHarnessStrconv "strconv"
	ipHarnessSyscall "syscall"
	ipHarnessTime "time"
	ipHarnessUtf8 "unicode/utf8"
)

// Lines put before the candidate's text in answer.go.
const ipHarnessAnswerOffset = __OFFSET__

const (
	ipHarnessExcerpt     = 1024    // characters of printed text and of messages reported
	ipHarnessPrintLimit  = 1 << 20 // bytes the whole run may print (RLIMIT_FSIZE is the same)
	ipHarnessValueLimit  = 1 << 20 // bytes of one encoded return value
	ipHarnessCapturePath = "/tmp/ip-harness-printed"
)

var (
	ipHarnessIn      = ipHarnessBufio.NewReaderSize(ipHarnessOs.Stdin, 1<<16)
	ipHarnessEvents  *ipHarnessOs.File
	ipHarnessCapture int
	ipHarnessPrinted int64
	// Held so that the collector never finalizes (closes) fd 2 once os.Stderr is replaced.
	ipHarnessRealStderr = ipHarnessOs.Stderr
)

func main() {
	memoryMb := int64(256)
	if len(ipHarnessOs.Args) > 1 {
		if n, err := ipHarnessStrconv.ParseInt(ipHarnessOs.Args[1], 10, 64); err == nil && n > 0 {
			memoryMb = n
		}
	}
	// A soft heap limit, so the collector works harder before RLIMIT_DATA is reached, and a
	// stack limit well under it, so runaway recursion is a stack overflow, not out of memory.
	ipHarnessDebug.SetMemoryLimit(memoryMb << 20)
	ipHarnessDebug.SetMaxStack(int(memoryMb<<20) / 4)
	if err := ipHarnessSetup(); err != nil {
		ipHarnessEvents = ipHarnessOs.NewFile(1, "events")
		message := ipHarnessStringJSON(nil, err.Error(), ipHarnessExcerpt)
		ipHarnessEmit([]byte(`{"e":"harness_error","msg":` + string(message) + "}"))
		ipHarnessOs.Exit(3)
	}
	ipHarnessEmit([]byte(`{"e":"loaded"}`))
	index := 0
	shown := int(ipHarnessInt())
	for ; index < shown; index++ {
		ipHarnessTest(index, true)
	}
	// The hidden tests' line arrives only after every shown test has reported; EOF if none.
	if hidden, ok := ipHarnessTokenOrEOF(); ok {
		count, _ := ipHarnessStrconv.Atoi(hidden)
		for end := index + count; index < end; index++ {
			ipHarnessTest(index, false)
		}
	}
	ipHarnessEmit([]byte(`{"e":"done"}`))
}

func ipHarnessSetup() error {
	events, err := ipHarnessSyscall.Dup(1)
	if err != nil {
		return err
	}
	flags := ipHarnessSyscall.O_RDWR | ipHarnessSyscall.O_CREAT | ipHarnessSyscall.O_TRUNC | ipHarnessSyscall.O_CLOEXEC
	capture, err := ipHarnessSyscall.Open(ipHarnessCapturePath, flags, 0o600)
	if err != nil {
		return err
	}
	_ = ipHarnessSyscall.Unlink(ipHarnessCapturePath)
	if err := ipHarnessSyscall.Dup3(capture, 1, 0); err != nil {
		return err
	}
	ipHarnessSyscall.CloseOnExec(events)
	ipHarnessEvents = ipHarnessOs.NewFile(uintptr(events), "events")
	ipHarnessCapture = capture
	// os.Stdout already writes to fd 1. fd 2 stays the real stderr, where the runtime's fatal
	// errors (out of memory, stack overflow) must reach the parent; only the os.Stderr value
	// (fmt.Fprintln(os.Stderr, ...), log) is captured. The print/println builtins are not.
	ipHarnessOs.Stderr = ipHarnessOs.NewFile(uintptr(capture), "/dev/stderr")
	return nil
}

func ipHarnessEmit(line []byte) {
	_, _ = ipHarnessEvents.Write(append(line, '\\n'))
}

// ipHarnessTest runs one test and reports it; `shown` tests also report output and message.
func ipHarnessTest(index int, shown bool) {
__READ_ARGS__
	_ = ipHarnessSyscall.Ftruncate(1, 0)
	_, _ = ipHarnessSyscall.Seek(1, 0, 0)
	status, message := "ok", ""
	value, failure, elapsed := ipHarnessCall(__ARGS__)
	if failure != "" {
		status, message = "error", failure
	}
	size, _ := ipHarnessSyscall.Seek(1, 0, 1)
	ipHarnessPrinted += size
	// A write past RLIMIT_FSIZE fails (Go ignores SIGXFSZ), so a full file means more was tried.
	if size > 0 && (ipHarnessPrinted > ipHarnessPrintLimit || size >= ipHarnessPrintLimit) {
		status, message = "output", "printed more than the output limit"
	}
	event := ipHarnessStrconv.AppendInt([]byte(`{"e":"test","i":`), int64(index), 10)
	if status == "ok" {
		encoded := ipHarnessWrite__RETURN__(make([]byte, 0, 64), value)
		if len(encoded) > ipHarnessValueLimit {
			status, message = "output", "the return value is larger than 1 MiB"
		} else {
			event = append(append(event, `,"v":`...), encoded...)
		}
	}
	event = append(append(append(event, `,"s":"`...), status...), `","t":`...)
	milliseconds := ipHarnessMath.Round(float64(elapsed.Nanoseconds())/1e4) / 100
	event = ipHarnessStrconv.AppendFloat(event, milliseconds, 'f', -1, 64)
	if shown {
		event = ipHarnessStringJSON(append(event, `,"o":`...), ipHarnessPrintedText(size), ipHarnessExcerpt)
		if message != "" {
			event = ipHarnessStringJSON(append(event, `,"msg":`...), message, ipHarnessExcerpt)
		}
	}
	ipHarnessEmit(append(event, '}'))
}

// ipHarnessCall calls the answer; a panic becomes a message, with the answer's line.
func ipHarnessCall(__PARAMS__) (value __RETURN_TYPE__, failure string, elapsed ipHarnessTime.Duration) {
	started := ipHarnessTime.Now()
	defer func() {
		elapsed = ipHarnessTime.Since(started)
		if caught := recover(); caught != nil {
			// Still on the panicking goroutine's stack: the answer's frames are below us.
			failure = ipHarnessPanicText(caught) + ipHarnessAnswerLine()
		}
	}()
	value = ipHarnessEntry(__ARGS__)
	return
}

func ipHarnessPanicText(caught interface{}) (text string) {
	defer func() {
		if recover() != nil { // the panic value's own Error or String method panicked
			text = "panic: (a value that cannot be printed)"
		}
	}()
	switch v := caught.(type) {
	case error: // runtime errors read "runtime error: index out of range [3] with length 3"
		return "panic: " + v.Error()
	case string:
		return "panic: " + v
	case interface{ String() string }:
		return "panic: " + v.String()
	case int:
		return "panic: " + ipHarnessStrconv.Itoa(v)
	case int64:
		return "panic: " + ipHarnessStrconv.FormatInt(v, 10)
	case float64:
		return "panic: " + ipHarnessStrconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "panic: " + ipHarnessStrconv.FormatBool(v)
	}
	return "panic: (a value that is not an error or text)"
}

// ipHarnessAnswerLine: " (line N)" for the innermost frame in answer.go, or "".
func ipHarnessAnswerLine() string {
	pcs := make([]uintptr, 64)
	frames := ipHarnessRuntime.CallersFrames(pcs[:ipHarnessRuntime.Callers(1, pcs)])
	for {
		frame, more := frames.Next()
		file := frame.File
		if len(file) >= 9 && file[len(file)-9:] == "answer.go" && (len(file) == 9 || file[len(file)-10] == '/') {
			if line := frame.Line - ipHarnessAnswerOffset; line > 0 {
				return " (line " + ipHarnessStrconv.Itoa(line) + ")"
			}
		}
		if !more {
			return ""
		}
	}
}

// ipHarnessPrintedText: the start of what this test printed, as text.
func ipHarnessPrintedText(size int64) string {
	if size <= 0 {
		return ""
	}
	buffer := make([]byte, 4*ipHarnessExcerpt)
	n, _ := ipHarnessSyscall.Pread(ipHarnessCapture, buffer, 0)
	if n < 0 {
		n = 0
	}
	return string(buffer[:n])
}

// Tokens are separated by one space; the last one of a line ends with its newline, so
// reading never asks for more input than the current line.
func ipHarnessTokenOrEOF() (string, bool) {
	var token []byte
	for {
		c, err := ipHarnessIn.ReadByte()
		if err != nil {
			return string(token), len(token) > 0
		}
		if c == ' ' || c == '\\n' {
			return string(token), true
		}
		token = append(token, c)
	}
}

func ipHarnessToken() string {
	token, ok := ipHarnessTokenOrEOF()
	if !ok {
		panic("the tests' input ended early")
	}
	return token
}

func ipHarnessInt() int64 {
	v, err := ipHarnessStrconv.ParseInt(ipHarnessToken(), 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func ipHarnessFloat() float64 {
	v, err := ipHarnessStrconv.ParseFloat(ipHarnessToken(), 64)
	if err != nil {
		panic(err)
	}
	return v
}

// ipHarnessString reads "x" followed by the hex of the text's UTF-8 bytes.
func ipHarnessString() string {
	token := ipHarnessToken()
	out := make([]byte, (len(token)-1)/2)
	for i := range out {
		out[i] = ipHarnessHexDigit(token[1+2*i])<<4 | ipHarnessHexDigit(token[2+2*i])
	}
	return string(out)
}

func ipHarnessHexDigit(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// ipHarnessFloatJSON writes a float as JSON, NaN and the infinities as bare words.
func ipHarnessFloatJSON(b []byte, v float64) []byte {
	switch {
	case ipHarnessMath.IsNaN(v):
		return append(b, "NaN"...)
	case ipHarnessMath.IsInf(v, 1):
		return append(b, "Infinity"...)
	case ipHarnessMath.IsInf(v, -1):
		return append(b, "-Infinity"...)
	}
	start := len(b)
	b = ipHarnessStrconv.AppendFloat(b, v, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, ".0"...) // still a float once parsed
}

// ipHarnessStringJSON writes a JSON string of at most `limit` characters (-1: all);
// invalid UTF-8 becomes U+FFFD.
func ipHarnessStringJSON(b []byte, s string, limit int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for count := 0; len(s) > 0 && count != limit; count++ {
		r, size := ipHarnessUtf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '"' || r == '\\\\':
			b = append(b, '\\\\', byte(r))
		case r < 0x20 || r == 0x2028 || r == 0x2029: // the last two end lines for some readers
			b = append(b, '\\\\', 'u', hex[r>>12], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = ipHarnessUtf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

__READERS____WRITERS__// Last in the file: the directive below renames this line's "file" for the compiler, so an
// error here (no such function, another type) names the declaration the answer must have.

//line __EXPECTED__:1
var ipHarnessEntry __ENTRY_TYPE__ = __ENTRY__
"""


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
        replacements = {
            "__SORT__": '\tipHarnessSort "sort"\n' if "map" in str(signature.returns) else "",
            "__OFFSET__": str(offset),
            "__READ_ARGS__": read_args,
            "__ARGS__": ", ".join(names),
            "__PARAMS__": params,
            "__RETURN__": _suffix(signature.returns),
            "__RETURN_TYPE__": go_type(signature.returns),
            "__READERS__": readers,
            "__WRITERS__": writers,
            "__EXPECTED__": EXPECTED_MARK + self.entry_point(signature),
            "__ENTRY_TYPE__": entry_type,
            "__ENTRY__": self.entry_name(signature),
        }
        return re.sub("|".join(replacements), lambda m: replacements[m.group(0)], _TEMPLATE)

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
