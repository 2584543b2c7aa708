"""Attack answers to sum-of-list in C++ (`long long sumOfList(const std::vector<long long>& numbers)`).

Each returns 0 when the sandbox blocked the attack and a non-zero number when it got through,
or never returns (loops, allocates, prints, forks). Data for the shared attack test; never run
the fork bomb, memory, output flood, CPU or signal attacks outside a sandbox.
"""

from __future__ import annotations

NETWORK = r"""
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static bool tcp_connects(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return connected;
}

static bool unix_connects(const char* path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return connected;
}

long long sumOfList(const vector<long long>& numbers) {
    bool any = tcp_connects(5432) || tcp_connects(6379) || unix_connects("/var/run/postgresql/.s.PGSQL.5432");
    return any ? 1 : 0;
}
"""

WRITE_OUTSIDE = r"""
#include <fcntl.h>
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    // /tmp itself is the box's own scratch space: /tmp/../work escapes it, /tmp does not count.
    const char* directories[] = {"/tmp/../work", "/var/tmp", "/dev/shm", "/etc", "/usr", "."};
    long long created = 0;
    for (const char* directory : directories) {
        string path = string(directory) + "/interviewprep_attack_" + to_string(getpid());
        int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && write(fd, "x", 1) == 1) ++created;
        if (fd >= 0) {
            close(fd);
            unlink(path.c_str());  // leave nothing behind where it got through
        }
    }
    return created;
}
"""

READ_OUTSIDE = r"""
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    const char* files[] = {"/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/1/cmdline",
                           "/work/main/interviewprep/settings.py", "/root/.bashrc"};
    long long read_ok = 0;
    for (const char* path : files) {
        int fd = open(path, O_RDONLY);
        char byte;
        if (fd >= 0 && read(fd, &byte, 1) == 1) ++read_ok;
        if (fd >= 0) close(fd);
    }
    if (DIR* directory = opendir("/var/tmp")) {  // a directory: reading is listing it
        if (readdir(directory) != nullptr) ++read_ok;
        closedir(directory);
    }
    return read_ok;
}
"""

FORK_BOMB = r"""
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    long long started = 0;
    for (int attempt = 0; attempt < (1 << 20); ++attempt) {
        pid_t child = fork();
        if (child == 0) {
            sleep(5);  // stays alive (and counted) for a while, then goes
            _exit(0);
        }
        if (child < 0) break;
        ++started;
    }
    return started;
}
"""

MEMORY = r"""
long long sumOfList(const vector<long long>& numbers) {
    const size_t size = size_t(4) << 30;
    char* block = new char[size];  // std::bad_alloc when refused: the harness reports "memory"
    for (size_t at = 0; at < size; at += 4096) block[at] = 1;  // touch every page
    long long touched = block[size - 4096];
    delete[] block;
    return touched;
}
"""

OUTPUT_FLOOD = r"""
long long sumOfList(const vector<long long>& numbers) {
    string chunk(1 << 20, 'x');
    for (int i = 0; i < 1024; ++i) {  // 1 GiB through stdout
        fwrite(chunk.data(), 1, chunk.size(), stdout);
        cout << chunk;
    }
    return 1;
}
"""

CPU_FOREVER = r"""
long long sumOfList(const vector<long long>& numbers) {
    volatile unsigned long long spins = 0;  // volatile: the compiler may not drop the loop
    for (;;) ++spins;
    return 1;
}
"""

SIGNAL_WORKER = r"""
#include <signal.h>
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    long long delivered = 0;
    // Itself excepted: in bwrap's pid namespace the box is pid 1 and its parent is outside (0),
    // and kill(0, ...) would be its own process group.
    for (pid_t pid : {pid_t(-1), getppid(), pid_t(1)}) {
        if (pid == 0 || pid == getpid()) continue;
        if (kill(pid, SIGKILL) == 0) delivered = 1;
    }
    return delivered;
}
"""

ENV_SECRETS = r"""
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    const char* words[] = {"SECRET", "DATABASE", "REDIS", "PASSWORD", "KEY", "TOKEN"};
    long long found = 0;
    for (char** entry = environ; entry && *entry; ++entry) {
        string name(*entry);
        name = name.substr(0, name.find('='));
        for (const char* word : words) {
            if (name.find(word) != string::npos) {
                ++found;
                break;
            }
        }
    }
    return found;
}
"""

EXEC_SHELL = r"""
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

long long sumOfList(const vector<long long>& numbers) {
    if (FILE* shell = popen("/bin/sh -c 'echo x'", "r")) {  // fork and exec of /bin/sh
        char line[8] = {0};
        bool ran = fgets(line, sizeof line, shell) != nullptr && line[0] == 'x';
        pclose(shell);
        if (ran) return 1;
    }
    pid_t child;
    char id[] = "/usr/bin/id";
    char* argv[] = {id, nullptr};
    if (posix_spawn(&child, id, nullptr, nullptr, argv, environ) == 0) {  // no fork needed
        int status = 0;
        if (waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    }
    execv(id, argv);  // replaces the harness if it works: the run then ends with no result
    return 0;
}
"""

ATTACKS: dict[str, str] = {
    "network": NETWORK,
    "write_outside": WRITE_OUTSIDE,
    "read_outside": READ_OUTSIDE,
    "fork_bomb": FORK_BOMB,
    "memory": MEMORY,
    "output_flood": OUTPUT_FLOOD,
    "cpu_forever": CPU_FOREVER,
    "signal_worker": SIGNAL_WORKER,
    "env_secrets": ENV_SECRETS,
    "exec_shell": EXEC_SHELL,
}
