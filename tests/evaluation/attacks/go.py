"""Go answers to sum-of-list that try to get out of the box (data for the shared attack test).

Each returns 0 when the attack was blocked and a non-zero number when it got through, or
never returns (loops, allocates, prints). System calls go through package syscall rather
than net or os/exec where that is the more direct route: it is what a determined answer
would use, and it needs no cgo-built package.
"""

from __future__ import annotations

ATTACKS: dict[str, str] = {
    # Raw sockets: TCP connects to PostgreSQL and Redis, then PostgreSQL's unix socket.
    "network": """\
import "syscall"

func sumOfList(numbers []int64) int64 {
	for _, port := range []int{5432, 6379} {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			continue
		}
		err = syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		syscall.Close(fd)
		if err == nil {
			return 1
		}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: "/var/run/postgresql/.s.PGSQL.5432"})
		syscall.Close(fd)
		if err == nil {
			return 1
		}
	}
	return 0
}
""",
    "write_outside": """\
import "os"

func sumOfList(numbers []int64) int64 {
	var written int64
	for _, dir := range []string{"/tmp/../work", "/var/tmp", "/dev/shm", "/etc", "/usr", "."} {
		path := dir + "/ip-attack-write-probe"
		if err := os.WriteFile(path, []byte("x"), 0o644); err == nil {
			written++
			os.Remove(path)
		}
	}
	return written
}
""",
    "read_outside": """\
import "os"

func sumOfList(numbers []int64) int64 {
	var read int64
	files := []string{
		"/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/1/cmdline",
		"/work/main/interviewprep/settings.py", "/root/.bashrc",
	}
	for _, path := range files {
		if _, err := os.ReadFile(path); err == nil {
			read++
		}
	}
	if _, err := os.ReadDir("/var/tmp"); err == nil {
		read++
	}
	return read
}
""",
    # Go cannot fork without exec through its API; the raw fork system call does. Each child
    # asks to die with its parent, then sleeps.
    "fork_bomb": """\
import "syscall"

func sumOfList(numbers []int64) int64 {
	var started int64
	for i := 0; i < 100000; i++ {
		pid, _, errno := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)
		if errno != 0 {
			break
		}
		if pid == 0 {
			syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
			for {
				syscall.RawSyscall(syscall.SYS_PAUSE, 0, 0, 0)
			}
		}
		started++
	}
	return started
}
""",
    "memory": """\
func sumOfList(numbers []int64) int64 {
	block := make([]byte, 4<<30)
	for i := 0; i < len(block); i += 4096 {
		block[i] = 1
	}
	if block[len(block)-4096] == 1 {
		return 1
	}
	return 0
}
""",
    "output_flood": """\
import "os"

func sumOfList(numbers []int64) int64 {
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	for i := 0; i < 1024; i++ {
		if _, err := os.Stdout.Write(chunk); err != nil {
			return 0
		}
	}
	return 1
}
""",
    "cpu_forever": """\
var spins int64

func sumOfList(numbers []int64) int64 {
	for {
		spins++
	}
}
""",
    "signal_worker": """\
import "syscall"

func sumOfList(numbers []int64) int64 {
	var delivered int64
	// Itself excepted: in bwrap's pid namespace the box is pid 1 and its parent is outside (0).
	for _, pid := range []int{-1, syscall.Getppid(), 1} {
		if pid == 0 || pid == syscall.Getpid() {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			delivered = 1
		}
	}
	return delivered
}
""",
    "env_secrets": """\
import (
	"os"
	"strings"
)

func sumOfList(numbers []int64) int64 {
	var found int64
	for _, entry := range os.Environ() {
		name := strings.ToUpper(strings.SplitN(entry, "=", 2)[0])
		for _, word := range []string{"SECRET", "DATABASE", "REDIS", "PASSWORD", "KEY", "TOKEN"} {
			if strings.Contains(name, word) {
				found++
				break
			}
		}
	}
	return found
}
""",
    "exec_shell": """\
import "os/exec"

func sumOfList(numbers []int64) int64 {
	if out, err := exec.Command("/bin/sh", "-c", "echo x").Output(); err == nil && string(out) == "x\\n" {
		return 1
	}
	if err := exec.Command("/usr/bin/id").Run(); err == nil {
		return 1
	}
	return 0
}
""",
}
