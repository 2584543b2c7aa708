"""Java: the candidate writes `class Solution` with an instance method; a harness class
(`InterviewPrepMain.java`, its template in `harness/` filled from the signature) reads the
tests' arguments, calls a fresh `new Solution()` per test on a thread with a big stack, and
writes the JSON events of `evaluation/sandbox/_warden.py`.

Both files are compiled by one javac run in the box; the run is one JVM (`java -cp box
InterviewPrepMain`). javac reads and writes files through NIO, whose FileDispatcherImpl makes
a socketpair(AF_UNIX) when it loads: the compile box must allow that call.
When `prebuilt_dir` is set, javac maps a class-data archive of its own classes from there
(`JAVAC_ARCHIVE`, made once per machine by `prebuild_argvs` compiling a representative
answer): ~25% less CPU per compile. The JVM checks the archive against the JDK and the flags
and, with -Xshare:auto, silently does without it when it does not fit.
The JVM reserves far more address space than it uses, so memory is limited by RLIMIT_DATA,
and the heap itself by -Xmx (an OutOfMemoryError is caught per test as status "memory").

Type mapping: int -> long, float -> double, string -> String, bool -> boolean; list<T> -> T[]
when T maps to a non-generic type (a scalar, an optional scalar, or such a list), otherwise
List<Boxed(T)>; map<string,T> -> Map<String, Boxed(T)>; optional<T> -> Boxed(T), null when
absent (Long, Double, String, Boolean, or T's own reference type).
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.templates import fill
from evaluation.languages.types import SCALARS, Signature, Type, camel, signature_parse

JDK = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = f"{JDK}/bin/java"
JAVAC = f"{JDK}/bin/javac"
# Not "Main": an answer may well declare a class Main of its own beside Solution.
HARNESS_CLASS = "InterviewPrepMain"
HARNESS_FILE = f"{HARNESS_CLASS}.java"  # the box's, and its template's in harness/
# What a Java answer may use without importing it, on one line so the answer starts on line 2.
IMPORTS = "import java.util.*; import java.util.function.*; import java.util.stream.*; import java.math.*;\n"
STACK_MB = 128  # the tests' thread: deep recursion behaves as on other judges
# The JVM as a short-lived process: C1 only (C2 costs more CPU than it saves in ~1 s), one
# compiler thread, the serial collector (no GC threads), the JDK's class-data archive, no
# /tmp/hsperfdata file, and the VM's own messages on stderr, never on the result channel.
JVM_FLAGS = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:CICompilerCount=1",
    "-Xshare:auto",
    "-XX:-UsePerfData",
    "-XX:+DisplayVMOutputToStderr",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
)
COMPILE_HEAP_MB = 384
# javac's flags, the same for the archive's prebuild and every compile. The JVM's warnings
# (an archive that does not fit, say) are off: they would read as the compiler's output.
_JAVAC_FLAGS = (
    *(f"-J{flag}" for flag in JVM_FLAGS[:5]),
    "-J-Xlog:disable",
    f"-J-Xmx{COMPILE_HEAP_MB}m",
    "-J-XX:CompressedClassSpaceSize=64m",
    "-J-XX:ReservedCodeCacheSize=64m",
    "-encoding",
    "UTF-8",
    "-proc:none",
    "-Xlint:none",
    # String `+` as StringBuilder calls, not invokedynamic: the run then starts no
    # StringConcatFactory bootstrap (~20 ms of the JVM's ~70 ms of CPU for ten tests).
    "-XDstringConcat=inline",
    "-Xmaxerrs",
    "5",
)
# java and javac find libjli.so through $ORIGIN, which the loader reads from /proc/self/exe;
# the box has no /proc.
_LIBRARY_PATH = {"LD_LIBRARY_PATH": f"{JDK}/lib"}
EXPECTS = "// Solution must declare: "
# javac's classes as one compile loads them (AppCDS, dynamic archive over the JDK's own).
JAVAC_ARCHIVE = "javac.jsa"

_PRIMITIVE = {"int": "long", "float": "double", "string": "String", "bool": "boolean"}
_BOXED = {"int": "Long", "float": "Double", "string": "String", "bool": "Boolean"}
_READ_SCALAR = {"int": "readLong()", "float": "readDouble()", "string": "readString()", "bool": "readBool()"}
_DEFAULT = {"long": "0", "double": "0.0", "String": '""', "boolean": "false"}
# javac's diagnostics: "Solution.java:3: error: message", then the source line and a caret line.
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:]+\.java):(?P<line>\d+): error: (?P<msg>.*)$", re.MULTILINE)


def generic(kind: Type) -> bool:
    """Whether the Java type has type arguments (then no array of it can be made)."""
    if kind.kind in SCALARS:
        return False
    if kind.kind == "map":
        return True
    return generic(kind.item)  # type: ignore[arg-type]


def java_type(kind: Type) -> str:
    if kind.kind in SCALARS:
        return _PRIMITIVE[kind.kind]
    item: Type = kind.item  # type: ignore[assignment]
    if kind.kind == "optional":
        return boxed(item)
    if kind.kind == "map":
        return f"Map<String, {boxed(item)}>"
    return f"{java_type(item)}[]" if not generic(item) else f"List<{boxed(item)}>"


def boxed(kind: Type) -> str:
    return _BOXED[kind.kind] if kind.kind in SCALARS else java_type(kind)


def nullable(kind: Type) -> bool:
    return kind.kind == "optional"


def default_value(kind: Type) -> str:
    name = java_type(kind)
    if name in _DEFAULT:
        return _DEFAULT[name]
    if kind.kind == "optional":
        return "null"
    if kind.kind == "map":
        return "new HashMap<>()"
    if name.endswith("[]"):
        return "new " + name.replace("[]", "[0]", 1)
    return "new ArrayList<>()"


class _Codecs:
    """Generates one reader and one writer method per distinct type of the signature."""

    def __init__(self) -> None:
        self.readers: dict[str, str] = {}
        self.writers: dict[str, str] = {}
        self.methods: list[str] = []

    def read(self, kind: Type) -> str:
        """An expression that reads one value of `kind` from the input."""
        if kind.kind in SCALARS:
            return _READ_SCALAR[kind.kind]
        key = str(kind)
        if key not in self.readers:
            name = f"read{len(self.readers)}"
            self.readers[key] = name
            self.methods.append(self._reader(name, kind))
        return self.readers[key] + "()"

    def _reader(self, name: str, kind: Type) -> str:
        item: Type = kind.item  # type: ignore[assignment]
        jtype = java_type(kind)
        if kind.kind == "optional":
            body = f"return readLong() == 0 ? null : {self.read(item)};"
        elif kind.kind == "map":
            body = (
                f"int n = readSize();\n        {jtype} m = new HashMap<>();\n"
                f"        for (int i = 0; i < n; i++) {{\n            String k = readString();\n"
                f"            m.put(k, {self.read(item)});\n        }}\n        return m;"
            )
        elif jtype.endswith("[]"):
            # new long[n][] for long[][]: the outer dimension only.
            array = "new " + jtype.replace("[]", "[n]", 1)
            body = (
                f"int n = readSize();\n        {jtype} a = {array};\n"
                f"        for (int i = 0; i < n; i++) a[i] = {self.read(item)};\n        return a;"
            )
        else:
            body = (
                f"int n = readSize();\n        {jtype} a = new ArrayList<>(n);\n"
                f"        for (int i = 0; i < n; i++) a.add({self.read(item)});\n        return a;"
            )
        return f"    static {jtype} {name}() throws IOException {{\n        {body}\n    }}\n"

    def write(self, kind: Type, value: str, *, boxed_value: bool = False) -> str:
        """A statement that writes `value` (of `kind`'s Java type) as JSON to `out`."""
        if kind.kind in SCALARS and not boxed_value:
            return {
                "int": f"out.append({value});",
                "float": f"writeDouble(out, {value});",
                "string": f"writeText(out, {value});",
                "bool": f"out.append({value});",
            }[kind.kind]
        key = str(kind) + ("!boxed" if boxed_value else "")
        if key not in self.writers:
            name = f"write{len(self.writers)}"
            self.writers[key] = name
            self.methods.append(self._writer(name, kind, boxed_value))
        return f"{self.writers[key]}(out, {value}, depth + 1);"

    def _writer(self, name: str, kind: Type, boxed_value: bool) -> str:
        item: Type = kind.item  # type: ignore[assignment]
        jtype = boxed(kind) if boxed_value else java_type(kind)
        null = (
            'out.append("null");\n            return;'
            if kind.kind == "optional"
            else f'throw new BadValue("returned null where {jtype.replace(chr(34), "")} is declared");'
        )
        lines = [f"if (v == null) {{\n            {null}\n        }}"]
        lines.append('if (depth > MAX_DEPTH) throw new BadValue("the return value is nested too deeply");')
        lines.append("if (out.length() > VALUE_LIMIT) throw new TooLarge();")
        if kind.kind in SCALARS:
            lines.append(self.write(kind, "v"))
        elif kind.kind == "optional":
            lines.append(self.write(item, "v", boxed_value=item.kind in SCALARS).replace("depth + 1", "depth"))
        elif kind.kind == "map":
            lines.append(
                "out.append('{');\n        boolean first = true;\n"
                f"        for (Map.Entry<String, {boxed(item)}> e : v.entrySet()) {{\n"
                "            if (!first) out.append(',');\n            first = false;\n"
                '            if (e.getKey() == null) throw new BadValue("a map key is null");\n'
                "            writeString(out, e.getKey());\n            out.append(':');\n"
                f"            {self.write(item, 'e.getValue()', boxed_value=item.kind in SCALARS)}\n"
                "        }\n        out.append('}');"
            )
        else:
            array = java_type(kind).endswith("[]")
            element = java_type(item) if array else boxed(item)
            is_boxed = item.kind in SCALARS and not array
            lines.append(
                "out.append('[');\n        boolean first = true;\n"
                f"        for ({element} x : v) {{\n"
                "            if (!first) out.append(',');\n            first = false;\n"
                f"            {self.write(item, 'x', boxed_value=is_boxed)}\n"
                "        }\n        out.append(']');"
            )
        body = "\n        ".join(lines)
        return f"    static void {name}(StringBuilder out, {jtype} v, int depth) {{\n        {body}\n    }}\n"


def _harness(signature: Signature, entry: str, expected: str) -> str:
    codecs = _Codecs()
    reads = "\n".join(
        f"        final {java_type(p.type)} a{n} = {codecs.read(p.type)};" for n, p in enumerate(signature.params)
    )
    arguments = ", ".join(f"a{n}" for n in range(len(signature.params)))
    params = "".join(f", {java_type(p.type)} a{n}" for n, p in enumerate(signature.params))
    returns = java_type(signature.returns)
    # Every use of the answer's class on one line, which javac echoes under any error in it:
    # the comment at its end tells compile_error what Solution must declare.
    bridge = (
        f"static Solution make() {{ return new Solution(); }} "
        f"static {returns} call(Solution solution{params}) throws Throwable "
        f"{{ return solution.{entry}({arguments}); }} "
        f"{EXPECTS}{expected}"
    )
    # The harness reaches the answer only through this class, loaded afresh for each test.
    unpacked = "".join(f", ({java_type(p.type)}) a[{n}]" for n, p in enumerate(signature.params))
    apply = (
        "public Object apply(Object[] a) { try { return call(make()" + unpacked + "); } "
        "catch (Throwable e) { throw InterviewPrepBridge.<RuntimeException>rethrow(e); } }"
    )
    values = {
        "CLASS": HARNESS_CLASS,
        "READS": reads,
        "RESULT_TYPE": returns,
        "ARGS": arguments,
        "APPLY": apply,
        "BRIDGE": bridge,
        "WRITE_RESULT": codecs.write(signature.returns, "result"),
        "METHODS": "\n".join(codecs.methods),
        "MAX_STACK": str(STACK_MB),
        "OFFSET": str(IMPORTS.count("\n")),
    }
    return fill(HARNESS_FILE, values)


class Java(Language):
    id: ClassVar[str] = "java"
    name: ClassVar[str] = "Java"
    ace_mode: ClassVar[str] = "ace/mode/java"
    answer_file: ClassVar[str] = "Solution.java"

    # ~0.1 s of CPU for the JVM to start and load the harness; C1-compiled code is within a
    # small factor of Python's speed budget at worst, usually far faster.
    cpu_extra_s: ClassVar[float] = 0.5
    memory_rlimit: ClassVar[str] = "data"
    # RLIMIT_DATA counts the tests' thread stack (reserved in full), the JVM's own heap-side
    # structures, metaspace and the C1 code cache beside the -Xmx heap.
    memory_extra_mb: ClassVar[int] = STACK_MB + 128
    processes: ClassVar[int] = 32  # the JVM's ~12 threads with the serial collector, and the answer's own
    compile_cpu_s: ClassVar[float] = 10.0
    compile_memory_mb: ClassVar[int] = 1024
    compile_processes: ClassVar[int] = 32
    host_paths: ClassVar[tuple[str, ...]] = ("/etc/java-17-openjdk",)  # lib/jvm.cfg and conf/ link there

    def version(self) -> str | None:
        """The JDK's own declaration (its `release` file), with both its programs present: asking
        `javac -version` starts a JVM, 0.3 s of CPU that every worker paid at start and every web
        process at its first submit."""
        if not (os.access(JAVAC, os.X_OK) and os.access(JAVA, os.X_OK)):
            return None
        try:
            with open(os.path.join(JDK, "release"), encoding="utf-8") as release:
                match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read(), re.MULTILINE)
        except OSError:
            return None
        return match.group(1) if match else None

    def entry_point(self, signature: Signature) -> str:
        return f"class Solution {{ {self._method(signature)} }}"

    def _method(self, signature: Signature) -> str:
        params = ", ".join(f"{java_type(p.type)} {camel(p.name)}" for p in signature.params)
        return f"{java_type(signature.returns)} {self.entry_name(signature)}({params})"

    def starter(self, signature: Signature) -> str:
        return (
            "class Solution {\n"
            f"    // {signature.summary}\n"
            f"    {self._method(signature)} {{\n"
            f"        return {default_value(signature.returns)};\n"
            "    }\n"
            "}\n"
        )

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        text = answer if answer.endswith("\n") else answer + "\n"
        return {
            self.answer_file: IMPORTS + text,
            HARNESS_FILE: _harness(signature, self.entry_name(signature), self.entry_point(signature)),
        }

    def answer_offset(self, answer: str) -> int:
        return IMPORTS.count("\n")

    def compile_argv(self, box: str) -> list[str]:
        archive = []
        if self.prebuilt_dir:
            archive = [f"-J-XX:SharedArchiveFile={os.path.join(self.prebuilt_dir, JAVAC_ARCHIVE)}"]
        return [JAVAC, *archive, *_JAVAC_FLAGS, "-d", box, self.answer_file, HARNESS_FILE]

    def prebuild_files(self) -> dict[str, str]:
        """A representative answer and its harness, for javac to load what real compiles load."""
        return self.sources(_PREBUILD_SIGNATURE, fill("PrebuildSolution.java", {}))

    def prebuild_argvs(self, directory: str) -> list[list[str]]:
        """javac compiles `prebuild_files` with the compiles' own flags (the archive records
        them) and writes the classes it loaded to `JAVAC_ARCHIVE` as it exits."""
        return [
            [
                JAVAC,
                f"-J-XX:ArchiveClassesAtExit={os.path.join(directory, JAVAC_ARCHIVE)}",
                *_JAVAC_FLAGS,
                "-d",
                os.path.join(directory, "classes"),
                *(os.path.join(directory, name) for name in (self.answer_file, HARNESS_FILE)),
            ],
            # The JVM may fail to write the archive and still exit 0; a compile naming a missing
            # archive would lose the JDK's own one too. No archive: the prebuild failed.
            ["/usr/bin/test", "-s", os.path.join(directory, JAVAC_ARCHIVE)],
        ]

    def compile_env(self, box: str) -> dict[str, str]:
        return super().compile_env(box) | _LIBRARY_PATH

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        # `memory_mb` is the box's whole limit (the question's plus memory_extra_mb); the heap
        # gets the question's share, so running out of it is an OutOfMemoryError caught per
        # test rather than RLIMIT_DATA killing the JVM.
        heap_mb = max(16, memory_mb - self.memory_extra_mb)
        return [
            JAVA,
            f"-Xmx{heap_mb}m",
            "-Xms8m",
            "-Xss1m",
            "-XX:CompressedClassSpaceSize=64m",
            "-XX:ReservedCodeCacheSize=32m",
            "-XX:MaxMetaspaceSize=128m",
            *JVM_FLAGS,
            "-XX:ErrorFile=/tmp/hs_err.log",
            "-Djava.io.tmpdir=/tmp",
            "-cp",
            box,
            HARNESS_CLASS,
        ]

    def run_env(self, box: str) -> dict[str, str]:
        return super().run_env(box) | _LIBRARY_PATH

    def executable(self, box: str) -> str:
        return JAVA

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        offset = self.answer_offset(answer)
        for match in _DIAGNOSTIC.finditer(output):
            if match.group("file").rsplit("/", 1)[-1] != self.answer_file:
                continue
            line = int(match.group("line")) - offset
            message = match.group("msg").strip()
            # "cannot find symbol" says which one on a "symbol:" line under the caret.
            symbol = re.match(r"\n.*\n.*\n\s+symbol:\s+(.*)", output[match.end() :])
            if symbol:
                message += f": {symbol.group(1).strip()}"
            return message, (line if line > 0 else None), _caret_column(output, match.end())
        match = _DIAGNOSTIC.search(output)
        if match:
            # Only the harness failed: the answer compiles but does not declare what the tests
            # call. The echoed line ends with the expected declaration (see `_harness`).
            message = match.group("msg").strip()
            echoed = output[match.end() :].split("\n", 2)[1] if "\n" in output[match.end() :] else ""
            if EXPECTS in echoed:
                expected = echoed.split(EXPECTS, 1)[1].strip()
                return f"the tests call {expected}, which your code does not declare ({message})", None, None
            return message, None, None
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        return (lines[0] if lines else "the compiler failed without saying why"), None, None

    def crash_reason(self, stderr: str) -> str | None:
        # An uncaught OutOfMemoryError in a thread of the answer's, or RLIMIT_DATA refusing the
        # JVM itself more memory ("os::commit_memory ... failed", "insufficient memory").
        if any(sign in stderr for sign in ("OutOfMemoryError", "insufficient memory", "os::commit_memory")):
            return "memory"
        return None


def _caret_column(output: str, end: int) -> int | None:
    """javac echoes the source line, then spaces and a caret under the error: its 1-based column."""
    following = output[end:].split("\n")[1:3]
    if len(following) == 2 and following[1].strip() == "^":
        return following[1].index("^") + 1
    return None


# What the javac archive is made from (`Java.prebuild_files`): a signature of many types, so
# the harness has readers and writers of arrays, lists, maps and optionals, and an answer
# (harness/PrebuildSolution.java) using what answers commonly do (collections, generics,
# lambdas and streams, records, switch expressions, nested classes, exceptions), so javac
# loads the classes a real compile needs.
_PREBUILD_SIGNATURE = signature_parse(
    {
        "function": "group_words",
        "params": [
            {"name": "grid", "type": "list<list<int>>"},
            {"name": "words", "type": "list<string>"},
            {"name": "weights", "type": "map<string,float>"},
            {"name": "limit", "type": "optional<int>"},
            {"name": "rows", "type": "list<map<string,int>>"},
            {"name": "strict", "type": "bool"},
        ],
        "returns": "map<string,list<optional<int>>>",
        "summary": "Group the words.",
    }
)
