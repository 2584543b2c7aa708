"""Run once per worker process, on the host, by the box's own `/usr/bin/python3 -I -S`.

It does the work every box used to repeat: compiling the warden (~3 ms of a ~16 ms run)
and building the seccomp filter with Debian's python3-seccomp (~1 ms). It is never imported
by the project and runs only the project's own code, before any candidate code exists.

stdin: the warden's source. stdout: one marshal blob, a tuple of plain values (any Python
can read it) holding
  the warden's code object as marshal bytes (made by this interpreter: the box's bytecode),
  the seccomp filters by profile, each a raw BPF program (libseccomp's `export_bpf`), or None,
  why there are no filters, or "".
Profiles: "python" (the answer runs inside the warden: no new process, no exec), "program"
(the warden execs one compiled answer or runtime, which Landlock then confines to that one
file: no new process), "supervisor" (the warden starts that program afresh for each test, so
it may fork; each child loads "program" on top before it execs), "compile" (a compiler
driver starts its passes: processes and exec allowed, bounded by RLIMIT_NPROC and Landlock;
still no sockets).
The warden loads the program with prctl(PR_SET_SECCOMP); the probe then proves it loads.
Only a missing python3-seccomp means "no filter"; any other failure exits non-zero, and the
parent then runs nothing.
"""

import _signal
import marshal
import posix
import sys

CLONE_THREAD = 0x00010000
DENIED = (
    "socket", "socketpair", "execve", "execveat", "fork", "vfork", "ptrace",
    "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "memfd_create",
    "memfd_secret", "shmget", "msgget", "semget", "mq_open", "userfaultfd",
    "perf_event_open", "bpf", "keyctl", "add_key", "request_key", "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "mknod", "mknodat", "fanotify_init",
    "open_by_handle_at", "kexec_load", "init_module", "finit_module", "acct", "swapon",
    "syslog", "personality", "name_to_handle_at",
)  # fmt: skip


def _import_seccomp():
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import seccomp
    finally:
        sys.path.pop()
    return seccomp


EXEC = ("execve", "execveat")
NEW_PROCESS = ("fork", "vfork")
PROFILES = {
    "python": DENIED,
    "program": tuple(name for name in DENIED if name not in EXEC),
    "supervisor": tuple(name for name in DENIED if name not in EXEC + NEW_PROCESS),
    # javac's NIO makes an unnamed AF_UNIX socketpair at start: it reaches nothing outside.
    "compile": tuple(name for name in DENIED if name not in EXEC + NEW_PROCESS + ("socketpair",)),
}


def _filter(seccomp, profile):
    """Allow by default, refuse what a test answer never needs and an attack always does."""
    eperm = seccomp.ERRNO(1)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in PROFILES[profile]:
        try:
            rules.add_rule(eperm, name)
        except (RuntimeError, ValueError):
            pass  # not a system call on this architecture
    if profile not in ("compile", "supervisor"):
        rules.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
        # ENOSYS, not EPERM: glibc's pthread_create then falls back to clone(), checked above.
        rules.add_rule(seccomp.ERRNO(38), "clone3")
    if profile == "python":
        # The CPU-limit timer and its handler stay as the warden set them. A program the
        # warden execs gets default actions at exec, and some runtimes (Go) must install
        # their own handlers or die: RLIMIT_CPU's hard limit bounds them instead.
        for signum in (_signal.SIGPROF, _signal.SIGXCPU):
            rules.add_rule(eperm, "rt_sigaction", seccomp.Arg(0, seccomp.EQ, signum))
        rules.add_rule(eperm, "setitimer", seccomp.Arg(0, seccomp.EQ, _signal.ITIMER_PROF))
    return rules


def _export(rules):
    read_fd, write_fd = posix.pipe()  # a filter is a few hundred bytes: far below the pipe's buffer

    class _Sink:
        def fileno(self):
            return write_fd

    try:
        rules.export_bpf(_Sink())
    finally:
        posix.close(write_fd)
    chunks = []
    while chunk := posix.read(read_fd, 1 << 16):
        chunks.append(chunk)
    posix.close(read_fd)
    return b"".join(chunks)


def _main():
    source = sys.stdin.buffer.read().decode("utf-8")
    warden = compile(source, "<warden>", "exec", dont_inherit=True)
    programs, why = None, ""
    try:
        seccomp = _import_seccomp()
        programs = {profile: _export(_filter(seccomp, profile)) for profile in PROFILES}
    except ImportError as exc:
        why = "python3-seccomp is not installed: " + str(exc)
    if programs is not None and any(not p or len(p) % 8 for p in programs.values()):
        programs, why = None, "libseccomp exported no BPF program"
    sys.stdout.buffer.write(marshal.dumps((marshal.dumps(warden), programs, why)))
    sys.stdout.buffer.flush()


_main()
