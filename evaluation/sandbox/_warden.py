"""The warden, the program each box runs: it locks itself down, then runs the candidate's tests.

It is never imported by the project. `_prepare.py` compiles it once per worker with
`/usr/bin/python3`, and each box's `-I -S -c` bootstrap reads that code object from stdin
(compiling the text in every box cost ~3 ms). It may use only what Debian's interpreter has,
and it avoids `json`, `re`, `os`, `signal`, `resource`, `ctypes` and `enum`: importing them
would cost more than the whole sandbox (json alone pulls in `re` and doubles the start-up
time).

argv: [-c, <fd of the private result channel>]. stdin, after the bootstrap has taken this
file's code: messages from the parent, each a 4-byte length then marshal (trusted data). The
first holds the answer, the function name, the shown tests' arguments, how many hidden tests
follow (`more`), the limits and the seccomp filter `_prepare.py` built. With `more`, a second
message holds the hidden tests' arguments; the parent sends it only once every shown test
has reported. Expected values never come here; the parent compares. The first message's keys
are the fields of `request.BoxRequest` (tests/evaluation/test_sandbox_request.py).

With `exec` in the first message, the warden only sets the layers up and then execs that
program (a compiler, or a compiled answer with its generated harness, see
`evaluation/languages/base.py`), which reads the rest of stdin itself. With `per_test` in it,
the warden instead stays as a supervisor that runs the program anew for each test, whose
encoded arguments come as the request's `tests` (and the second message's), one line each.

The answer's top level runs once to check it loads, then again in a fresh module before
each later test, so no state carries from one test to the next.

The result channel carries one JSON object per line, written with a small encoder below:
  {"e":"ready"}                        every requested layer is in force
  {"e":"setup_error","msg":...}        a layer could not be applied (exit 3)
  {"e":"exec_error","msg":...}         after "ready": the program to exec did not start (exit 3)
  {"e":"probe","seccomp":b,"landlock":n}   answer to a probe request (exit 0)
  {"e":"load_error","kind":"compile"|"exception"|"missing"|"output","msg":...,"line":n,"col":n}
  {"e":"loaded"}
  {"e":"test","i":n,"s":"ok"|"error"|"memory"|"output"|"badvalue","v":...,"t":ms,"o":...,"msg":...}
                                       ("o" and "msg" only for the shown tests)
  {"e":"done"}
The candidate runs in this process and can write to the channel too; the parent treats
every line as untrusted input, and forging a line gains nothing it could not get by
returning that value.
"""

import _signal
import marshal
import posix
import sys
import time

EXIT_SETUP = 3
EXIT_CPU = 99
EXCERPT_CHARS = 1024
PRINT_LIMIT_CHARS = 1 << 20
VALUE_LIMIT_BYTES = 1 << 20
INTERPRETER_ALLOWANCE = 64 << 20  # address space the interpreter itself holds before the answer runs
ANSWER_FILE = "<string>"  # the name exec() gives the text it compiles

PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SYS_PRCTL = {"x86_64": 157, "aarch64": 167}
SYS_PRLIMIT64 = {"x86_64": 302, "aarch64": 261}
# Generic Linux numbers, the same on both machines above; the resource module costs 0.2 ms.
RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_CORE, RLIMIT_NPROC, RLIMIT_NOFILE = 0, 1, 2, 4, 6, 7
RLIMIT_MEMLOCK, RLIMIT_AS, RLIMIT_MSGQUEUE = 8, 9, 12
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LL_EXECUTE = 1 << 0
LL_READ_FILE = 1 << 2
LL_READ_DIR = 1 << 3
LL_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)  # what a rule on a file may grant

RESULT_FD = int(sys.argv[1])
_ESCAPES = {i: f"\\u{i:04x}" for i in range(32)}
_ESCAPES[ord('"')] = '\\"'
_ESCAPES[ord("\\")] = "\\\\"


class OutputLimitExceeded(BaseException):
    """BaseException so that a candidate's `except Exception` cannot swallow it."""


def _enc(value, depth=0):
    # Base-class methods, not the value's own, so a subclass cannot rewrite what is sent.
    if depth > 200:
        raise ValueError("the return value is nested too deeply")
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        text = float.__repr__(value)
        return {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}.get(text, text)
    if isinstance(value, str):
        return '"' + str.translate(value, _ESCAPES) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join([_enc(item, depth + 1) for item in value]) + "]"
    if isinstance(value, dict):
        parts = []
        for key, item in dict.items(value):
            if isinstance(key, str):
                name = _enc(key)
            elif isinstance(key, (int, float)) or key is None:
                name = '"' + _enc(key) + '"'
            else:
                raise TypeError("a dict key of type " + type(key).__name__ + " is not JSON")
            parts.append(name + ":" + _enc(item, depth + 1))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (set, frozenset)):
        items = list(value)
        try:
            items.sort()
        except TypeError:
            pass
        return _enc(items, depth)
    raise TypeError("returned a value of type " + type(value).__name__ + ", which is not JSON")


def _write_result(data):
    view = memoryview(data)
    while view:
        view = view[posix.write(RESULT_FD, view) :]


def _emit(fields):
    _write_result(("{" + ",".join(['"' + k + '":' + v for k, v in fields]) + "}\n").encode("utf-8", "backslashreplace"))


def _text(value):
    return _enc(str(value)[:EXCERPT_CHARS])


class _Printed:
    """Stands in for sys.stdout and sys.stderr: keeps an excerpt per test, caps the total."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self):
        self.total = 0
        self.excerpt = []
        self.excerpt_len = 0
        self.exceeded = False
        self.buffer = _PrintedBytes(self)

    def begin(self):
        self.excerpt = []
        self.excerpt_len = 0
        self.exceeded = False

    def take(self):
        return "".join(self.excerpt)

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        text = str.__str__(text)
        self.total += len(text)
        if self.total > PRINT_LIMIT_CHARS:
            self.exceeded = True
            raise OutputLimitExceeded()
        if self.excerpt_len < EXCERPT_CHARS:
            piece = text[: EXCERPT_CHARS - self.excerpt_len]
            self.excerpt.append(piece)
            self.excerpt_len += len(piece)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        return None

    def isatty(self):
        return False

    def writable(self):
        return True

    def readable(self):
        return False

    def fileno(self):
        raise OSError("printed output is captured; it has no file descriptor")


class _PrintedBytes:
    def __init__(self, printed):
        self._printed = printed

    def write(self, data):
        self._printed.write(bytes(data).decode("utf-8", "replace"))
        return len(data)

    def flush(self):
        return None


def _libc_syscall():
    # _ctypes without the ctypes package: the package costs ~5 ms of imports per run.
    import _ctypes

    class _Long(_ctypes._SimpleCData):
        _type_ = "l"

    class _Syscall(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = _Long

    function = _Syscall(_ctypes.dlsym(_ctypes.dlopen(None, 0), "syscall"))

    def call(number, *args):
        result = function(_Long(number), *[a if isinstance(a, bytes) else _Long(a) for a in args])
        if result < 0:
            err = _ctypes.get_errno()
            raise OSError(err, posix.strerror(err))
        return result

    return call


def _u64(value):
    return value.to_bytes(8, sys.byteorder)


def _landlock_abi(syscall):
    try:
        return syscall(SYS_LANDLOCK_CREATE_RULESET, 0, 0, LANDLOCK_CREATE_RULESET_VERSION)
    except OSError:
        return 0


def _apply_landlock(syscall, abi, rules):
    """Python answers: read-only access to the standard library and its native libraries;
    a program the warden execs: the host's `rules`, [path, "r" | "x" | "rw"] (read; read and
    execute; everything). Nothing else.

    Every filesystem right the kernel knows is handled, so anything not granted below
    (writing, creating, reading any other file, /proc, /dev) is refused. From ABI 4 TCP
    bind/connect are handled with no rule (all refused); from ABI 6 abstract unix sockets
    and signals are scoped to this process.
    """
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= 1 << 13  # REFER
    if abi >= 3:
        fs |= 1 << 14  # TRUNCATE
    if abi >= 5:
        fs |= 1 << 15  # IOCTL_DEV
    net = 0b11 if abi >= 4 else 0
    scoped = 0b11 if abi >= 6 else 0
    attr = _u64(fs) + _u64(net) + _u64(scoped)
    ruleset = syscall(SYS_LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    if rules is None:
        rules = [[p, "r"] for p in sys.path if p.startswith("/usr/lib/")]
        multiarch = getattr(sys.implementation, "_multiarch", "")
        if multiarch:
            rules.append(["/usr/lib/" + multiarch, "r"])
    grants = {"r": LL_READ_FILE | LL_READ_DIR, "x": LL_READ_FILE | LL_READ_DIR | LL_EXECUTE, "rw": fs}
    for path, grant in rules:
        try:
            fd = posix.open(path, posix.O_PATH | posix.O_CLOEXEC)
        except OSError:
            continue
        access = grants[grant]
        if posix.fstat(fd).st_mode & 0o170000 != 0o040000:
            access &= LL_FILE_RIGHTS
        rule = _u64(access) + fd.to_bytes(4, sys.byteorder, signed=True)
        syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, rule, 0)
        posix.close(fd)
    syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)
    posix.close(ruleset)


def _apply_seccomp(syscall, machine, program):
    """Load the BPF program `_prepare.py` built with python3-seccomp (the rules are listed there)."""
    if not isinstance(program, bytes) or not program or len(program) % 8:
        raise OSError("no seccomp filter was handed to the box")
    import _ctypes

    class _Char(_ctypes._SimpleCData):
        _type_ = "c"

    class _Program(_ctypes.Array):
        _type_ = _Char
        _length_ = len(program)

    instructions = _Program.from_buffer_copy(program)
    # struct sock_fprog {unsigned short len; struct sock_filter *filter;}, on 64-bit machines
    fprog = (len(program) // 8).to_bytes(2, sys.byteorder) + bytes(6)
    fprog += _ctypes.addressof(instructions).to_bytes(8, sys.byteorder)
    syscall(SYS_PRCTL[machine], PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0)


def _set_limits(syscall, machine, request):
    # RLIMIT_CPU is the backstop for when the timer's handler cannot run (long C calls).
    # A program the warden execs brings its own figures; runtimes that reserve much more
    # address space than they use (JVM, V8, Go) are held by RLIMIT_DATA instead of RLIMIT_AS.
    program = request.get("exec")
    memory = request["memory_bytes"] + (0 if program else INTERPRETER_ALLOWANCE)
    limits = (
        (RLIMIT_CPU, request["cpu_hard_limit"]),
        (RLIMIT_DATA if program and program["memory"] == "data" else RLIMIT_AS, memory),
        (RLIMIT_NPROC, program["processes"] if program else 8),
        (RLIMIT_FSIZE, program["file_bytes"] if program else 1 << 20),
        (RLIMIT_NOFILE, 64),
        (RLIMIT_CORE, 0),
        (RLIMIT_MEMLOCK, 0),
        (RLIMIT_MSGQUEUE, 0),
    )
    if machine not in SYS_PRLIMIT64:
        raise OSError("cannot set resource limits on " + machine)
    for which, value in limits:
        syscall(SYS_PRLIMIT64[machine], 0, which, _u64(value) + _u64(value), 0)


def _on_cpu_limit(signum, frame):
    posix._exit(EXIT_CPU)


def _answer_line(exc):
    """The line of the answer's own code where `exc` was raised, or None if none of it ran."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == ANSWER_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _exception_text(exc):
    if isinstance(exc, SystemExit):
        return "SystemExit: the answer called exit()"
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - the candidate's __str__ may do anything
        message = "<unprintable>"
    return (type(exc).__name__ + (": " + message if message else ""))[: EXCERPT_CHARS - 20]


def _describe(exc):
    line = _answer_line(exc)
    return _exception_text(exc) + (f" (line {line})" if line else "")


def _read_exact(size):
    chunks, left = [], size
    while left:
        chunk = posix.read(0, min(left, 1 << 20))
        if not chunk:
            raise EOFError("stdin ended inside a message from the parent")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_message():
    """One message from the parent: a 4-byte length, then marshal (trusted data)."""
    return marshal.loads(_read_exact(int.from_bytes(_read_exact(4), "little")))  # noqa: S302


def _setup(request):
    # Order matters: modules load before Landlock hides their directories, and seccomp comes
    # last because it refuses what the steps before it still need.
    syscall = _libc_syscall()
    machine = posix.uname().machine
    parent = request.get("parent_pid")
    if parent and machine in SYS_PRCTL:
        syscall(SYS_PRCTL[machine], PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if posix.getppid() != parent:
            posix._exit(EXIT_SETUP)
    program = request.get("seccomp_bpf")
    abi = _landlock_abi(syscall)
    if request["probe"]:
        _emit([("e", '"probe"'), ("seccomp", _enc(program is not None)), ("landlock", _enc(abi))])
        request["seccomp"] = program is not None
        request["landlock"] = abi > 0
    _set_limits(syscall, machine, request)
    if request["landlock"] or request["seccomp"]:
        if machine not in SYS_PRCTL:
            raise OSError("cannot set no_new_privs on " + machine)
        syscall(SYS_PRCTL[machine], PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if request["landlock"]:
        if abi < 1:
            raise OSError("Landlock is not available")
        _apply_landlock(syscall, abi, request["exec"]["rules"] if request.get("exec") else None)
    if not request["probe"]:
        # Armed before seccomp, which then refuses to let the answer change them. The few
        # milliseconds until the answer starts count against its limit.
        _signal.signal(_signal.SIGPROF, _on_cpu_limit)
        _signal.signal(_signal.SIGXCPU, _on_cpu_limit)
        _signal.setitimer(_signal.ITIMER_PROF, request["cpu_limit"])
    if request["seccomp"]:
        _apply_seccomp(syscall, machine, program)
    return syscall, machine


def _fresh_module():
    module = type(sys)("__answer__")
    sys.modules["__answer__"] = module
    return module


def _load(text, printed):
    """Run the answer's top level once; return its compiled code and module, or None once the
    reason it cannot load has been reported."""
    module = _fresh_module()
    caught = []

    # exec() of the text, not compile(): compile() first builds the ast module's ~120 classes
    # (~1.6 ms, more than running a typical answer). The code object, needed again for every
    # test, is taken from the first profiler event of its frame, before any of it runs.
    def first_frame(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == ANSWER_FILE:
            caught.append(frame.f_code)
            sys.setprofile(None)

    sys.setprofile(first_frame)
    try:
        exec(text, module.__dict__)  # noqa: S102 - running the answer is the point, here only
    except BaseException as exc:  # noqa: BLE001 - anything compiling or the candidate's top level raises
        sys.setprofile(None)
        line, column = _answer_line(exc), None
        if line is None:  # it never ran: SyntaxError, ValueError (NUL), RecursionError or MemoryError
            kind, message = "compile", _exception_text(exc)
            if isinstance(exc, SyntaxError) and not isinstance(exc.lineno, bool):
                message, line, column = str(exc.msg), exc.lineno, exc.offset
        elif printed.exceeded:
            kind, message = "output", "printed more than the output limit"
        else:
            kind, message = "exception", _exception_text(exc)
        position = [(k, _enc(v) if isinstance(v, int) and not isinstance(v, bool) else "null")
                    for k, v in (("line", line), ("col", column))]  # fmt: skip
        _emit([("e", '"load_error"'), ("kind", _enc(kind)), ("msg", _text(message)), *position])
        return None
    sys.setprofile(None)
    return (caught[0] if caught else text), module


def _all_tests(request):
    yield from request["tests"]
    if request.get("more"):
        # The parent sends these only once every test above has reported, so nothing the
        # answer showed there can hold them.
        yield from _read_message()
        posix.close(0)


def _failure(exc, printed):
    if isinstance(exc, OutputLimitExceeded) or printed.exceeded:
        return "output", None
    if isinstance(exc, MemoryError):
        return "memory", None
    return "error", _describe(exc)


def _run_in_process(request):
    printed = _Printed()
    sys.stdout = sys.stderr = printed
    sys.stdin = None
    _emit([("e", '"ready"')])
    loaded = _load(request["code"], printed)
    if loaded is None:
        return
    code, module = loaded
    if not callable(module.__dict__.get(request["function"])):
        _emit([("e", '"load_error"'), ("kind", '"missing"')])
        return
    _emit([("e", '"loaded"')])

    detailed_count = len(request["tests"])
    fresh = request.get("fresh_module", True)  # only benchmarks/bench_sandbox.py turns it off, to weigh it
    for index, blob in enumerate(_all_tests(request)):
        fields = [("e", '"test"'), ("i", _enc(index))]
        status, message, elapsed = "ok", None, 0.0
        printed.begin()
        try:
            if index and fresh:
                # A fresh module per test: no global, default argument or cache carries over.
                module.__dict__.clear()  # breaks the function <-> globals cycles, frees it now
                module = _fresh_module()
                exec(code, module.__dict__)  # noqa: S102
                printed.begin()  # the top level's prints belong to no test
            function = module.__dict__.get(request["function"])
            if not callable(function):
                raise NameError(request["function"] + " is not defined when the answer runs again")
            args = marshal.loads(blob)  # noqa: S302 - written by the parent, trusted
            started = time.perf_counter()
            try:
                value = function(*args)
            finally:
                elapsed = time.perf_counter() - started
        except BaseException as exc:  # noqa: BLE001 - the candidate's errors are results
            status, message = _failure(exc, printed)
        args = None
        if printed.exceeded:
            status = "output"
        if status == "ok":
            try:
                encoded = _enc(value)
            except (TypeError, ValueError, RecursionError, MemoryError) as exc:
                status, message = "badvalue", str(exc)
            else:
                if len(encoded) > VALUE_LIMIT_BYTES:
                    status, message = "output", "the return value is larger than 1 MiB"
                else:
                    fields.append(("v", encoded))
            value = encoded = None
        fields += [("s", '"' + status + '"'), ("t", _enc(round(elapsed * 1000, 2)))]
        if index < detailed_count:  # later tests report no output or message: the parent drops them
            fields.append(("o", _text(printed.take())))
            if message is not None:
                fields.append(("msg", _text(message)))
        _emit(fields)
    _emit([("e", '"done"')])


def _exec(program):
    """Become the compiler or the compiled answer, inside every layer set up above. A program
    run for tests writes its events to stdout (fd 1), so the result channel becomes fd 1; a
    compiler's output stays on stdout and stderr, and the channel is closed for it."""
    _emit([("e", '"ready"')])
    try:
        if program["results_on_stdout"]:
            posix.dup2(RESULT_FD, 1)
        else:
            posix.set_inheritable(RESULT_FD, False)
        posix.chdir(program["cwd"])
        posix.execve(program["argv"][0], program["argv"], program["env"])
    except BaseException as exc:  # noqa: BLE001 - say why, then fail closed
        _emit([("e", '"exec_error"'), ("msg", _text(type(exc).__name__ + ": " + str(exc)))])
    posix._exit(EXIT_SETUP)


def _cpu_spent():
    spent = posix.times()
    return spent[0] + spent[1] + spent[2] + spent[3]


def _child_exec(syscall, machine, request, program, stdin_fd, events_fd, budget):
    """In the forked child: stdin and stdout become its pipes, its CPU limit what is left of
    the run's, the program's seccomp filter goes on top of the supervisor's, then the exec.
    Any failure ends the child before the answer runs (the supervisor reports it)."""
    try:
        for fd, target in ((stdin_fd, 0), (events_fd, 1)):
            if fd == target:  # the pipe took the number of a closed stdin: dup2 would keep it close-on-exec
                posix.set_inheritable(fd, True)
            else:
                posix.dup2(fd, target)
        posix.closerange(3, 64)
        parent = request.get("parent_pid")
        if parent and machine in SYS_PRCTL:
            syscall(SYS_PRCTL[machine], PR_SET_PDEATHSIG, 9, 0, 0, 0)
        whole = int(budget) + 1
        syscall(SYS_PRLIMIT64[machine], 0, RLIMIT_CPU, _u64(whole) + _u64(whole), 0)
        _signal.setitimer(_signal.ITIMER_PROF, budget)  # not inherited across fork; kept by exec
        if request["landlock"]:
            # A domain of its own inside the supervisor's (the same rules): from Landlock ABI 6
            # on, it cannot signal the supervisor, as a program run alone has no parent in the box.
            _apply_landlock(syscall, _landlock_abi(syscall), program["rules"])
        if request["seccomp"]:
            _apply_seccomp(syscall, machine, request.get("child_seccomp_bpf"))
        posix.chdir(program["cwd"])
        posix.execve(program["argv"][0], program["argv"], program["env"])
    finally:
        posix._exit(EXIT_SETUP)


def _relay(fd, index, first):
    """Forward one child's events to the result channel as test `index`'s; the first child's
    `loaded` or `load_error` is the answer's load check. Returns what came: "test",
    "load_error", "loaded" or ""."""
    came, pending, prefix = "", b"", b'{"e":"test","i":0,'
    while chunk := posix.read(fd, 1 << 16):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        if len(pending) > VALUE_LIMIT_BYTES + (1 << 16):
            pending = b""  # longer than any event the program writes: not one of its own
        for line in lines:
            if came in ("", "loaded") and line.startswith(prefix):
                came = "test"
                _write_result(b'{"e":"test","i":' + str(index).encode() + b"," + line[len(prefix) :] + b"\n")
            elif first and not came and line == b'{"e":"loaded"}':
                came = "loaded"
                _write_result(line + b"\n")
            elif first and not came and line.startswith(b'{"e":"load_error"'):
                came = "load_error"
                _write_result(line + b"\n")
    return came


def _end_as(status, cpu_limit):
    """End this process the way a child that did not report ended: the CPU limit, its
    signal or its exit code."""
    if posix.WIFSIGNALED(status):
        signum = posix.WTERMSIG(status)
        # The child's only CPU timers are the ones set from the run's budget: their signals
        # mean it ran out. A SIGKILL may be RLIMIT_CPU's or another's (the memory killer).
        if signum in (_signal.SIGPROF, _signal.SIGXCPU) or (
            signum == _signal.SIGKILL and _cpu_spent() >= cpu_limit * 0.95
        ):
            posix._exit(EXIT_CPU)
        _signal.signal(signum, _signal.SIG_DFL)
        posix.kill(posix.getpid(), signum)
        # Still here: as the box's PID 1 no signal of its own kills it. Exit as a shell
        # reports a signal's death, as bwrap reports its child's.
        posix._exit(128 + signum)
    posix._exit(posix.WEXITSTATUS(status) if posix.WIFEXITED(status) else EXIT_SETUP)


def _supervise(syscall, machine, request):
    """Run the program once per test, each in a new process from the compiled file, so no
    global or static of the answer's outlives its test. The run's CPU limit is shared: each
    child gets what the tests before it left. A child that ends without reporting ends the
    run the way it ended (its exit code or its signal), as one process running them all would."""
    program = request["exec"]
    _emit([("e", '"ready"')])
    shown = request["tests"]
    tests = [(line, True) for line in shown] or [(None, True)]  # no shown test: a load check alone
    index = 0  # the next test's; the load check is no test
    first = True
    while tests:
        line, visible = tests.pop(0)
        budget = request["cpu_limit"] - _cpu_spent()
        if budget <= 0:
            posix._exit(EXIT_CPU)
        stdin_r, stdin_w = posix.pipe()
        events_r, events_w = posix.pipe()
        pid = posix.fork()
        if pid == 0:
            _child_exec(syscall, machine, request, program, stdin_r, events_w, budget)
        posix.close(stdin_r)
        posix.close(events_w)
        # The shown line for a shown test; an empty one, then the test, for a hidden one (so
        # the program reports no output or message for it). The program reads all of its
        # input before writing more than a line, so this write does not wait on the read below.
        data = b"0\n" if line is None else (line if visible else b"0\n" + line)
        try:
            view = memoryview(data)
            while view:
                view = view[posix.write(stdin_w, view) :]
        except OSError:
            pass  # the child is gone already: its end says why
        posix.close(stdin_w)
        came = _relay(events_r, index, first)
        first = False
        posix.close(events_r)
        _, status = posix.waitpid(pid, 0)
        if came == "load_error":
            posix._exit(0)
        if came != ("loaded" if line is None else "test") or (line is None and status != 0):
            _end_as(status, request["cpu_limit"])
        if line is not None:
            index += 1
        if not tests and request.get("more") and visible:
            # The parent sends these only once every shown test has reported.
            tests = [(hidden, False) for hidden in _read_message()]
            posix.close(0)
    _emit([("e", '"done"')])


def _main():
    try:
        request = _read_message()
        if not request.get("more") and not request.get("exec"):
            posix.close(0)  # a program it execs reads its tests from the rest of stdin
        syscall, machine = _setup(request)
    except BaseException as exc:  # noqa: BLE001 - fail closed and say why
        try:
            _emit([("e", '"setup_error"'), ("msg", _text(type(exc).__name__ + ": " + str(exc)))])
        finally:
            posix._exit(EXIT_SETUP)
    if request["probe"]:
        _emit([("e", '"ready"')])
        posix._exit(0)
    if request.get("exec") and request["exec"].get("per_test"):
        _supervise(syscall, machine, request)
        posix._exit(0)
    if request.get("exec"):
        _exec(request["exec"])
    try:
        _run_in_process(request)
    except BaseException as exc:  # noqa: BLE001 - e.g. OutputLimitExceeded raised while emitting
        _emit([("e", '"harness_error"'), ("msg", _text(_describe(exc)))])
    posix._exit(0)


_main()
