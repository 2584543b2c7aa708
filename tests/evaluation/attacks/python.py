"""The shared attack suite's answers in Python (see tests/evaluation/test_language_attacks.py):
each is an answer to sum-of-list that returns 0 when the attack was blocked."""

ATTACKS = {
    "network": """
import socket
def sum_of_list(numbers):
    got = 0
    for family, address in ((socket.AF_INET, ("127.0.0.1", 5432)), (socket.AF_INET, ("127.0.0.1", 6379)),
                            (socket.AF_UNIX, "/var/run/postgresql/.s.PGSQL.5432")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(1)
            s.connect(address)
            got = 1
        except OSError:
            pass
    return got
""",
    "write_outside": """
def sum_of_list(numbers):
    got = 0
    for path in ("/tmp/../work/x", "/var/tmp/x", "/dev/shm/x", "/etc/x", "/usr/x", "x"):
        try:
            open(path, "w").write("x")
            got += 1
        except OSError:
            pass
    return got
""",
    "read_outside": """
def sum_of_list(numbers):
    got = 0
    for path in ("/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/1/cmdline",
                 "/work/main/interviewprep/settings.py", "/root/.bashrc"):
        try:
            open(path).read()
            got += 1
        except OSError:
            pass
    try:
        import os
        os.listdir("/var/tmp")
        got += 1
    except OSError:
        pass
    return got
""",
    "fork_bomb": """
import os
def sum_of_list(numbers):
    started = 0
    for _ in range(1000):
        try:
            if os.fork() == 0:
                while True:
                    pass
            started += 1
        except OSError:
            break
    return started
""",
    "memory": """
def sum_of_list(numbers):
    block = bytearray(4 << 30)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return 1
""",
    "output_flood": """
def sum_of_list(numbers):
    line = "x" * 1023
    for _ in range(1 << 20):
        print(line)
    return 0
""",
    "cpu_forever": """
def sum_of_list(numbers):
    while True:
        pass
""",
    "signal_worker": """
import os, signal
def sum_of_list(numbers):
    got = 0
    # Itself excepted: in bwrap's pid namespace the box is pid 1 and its parent is outside (0).
    for pid in {-1, os.getppid(), 1} - {0, os.getpid()}:
        try:
            os.kill(pid, signal.SIGKILL)
            got = 1
        except OSError:
            pass
    return got
""",
    "env_secrets": """
import os
def sum_of_list(numbers):
    words = ("SECRET", "DATABASE", "REDIS", "PASSWORD", "KEY", "TOKEN")
    return sum(1 for name in os.environ if any(word in name for word in words))
""",
    "exec_shell": """
import os
def sum_of_list(numbers):
    try:
        os.execv("/bin/sh", ["sh", "-c", "echo x"])
    except OSError:
        pass
    try:
        import subprocess
        subprocess.run(["/usr/bin/id"], check=True)
        return 1
    except Exception:
        return 0
""",
}
