"""Attack answers in Java for the shared attack suite: each answers `sum-of-list`
(`class Solution { long sumOfList(long[] numbers) }`) and returns 0 when the sandbox blocked
the attack, a non-zero number when it got through, or never returns (loops, allocates, prints).

Java starts other programs only through ProcessBuilder, which by default runs them through
lib/jspawnhelper; the attacks switch it to plain fork+exec (launchMechanism FORK) as well, so
the only thing between them and a child process is the sandbox.
"""

from __future__ import annotations

NETWORK = """
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;

class Solution {
    long sumOfList(long[] numbers) {
        long reached = 0;
        for (int port : new int[] {5432, 6379}) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                reached = 1;
            } catch (Exception e) {
                // refused or blocked
            }
        }
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of("/var/run/postgresql/.s.PGSQL.5432"));
            reached = 1;
        } catch (Exception e) {
            // refused or blocked
        }
        return reached;
    }
}
"""

WRITE_OUTSIDE = """
import java.nio.file.Files;
import java.nio.file.Path;

class Solution {
    long sumOfList(long[] numbers) {
        String[] targets = {"/tmp/../work/attack-java", "/var/tmp/attack-java", "/dev/shm/attack-java",
            "/etc/attack-java", "/usr/attack-java", "attack-java"};
        long written = 0;
        for (String target : targets) {
            try {
                Files.write(Path.of(target), new byte[] {'x'});
                written++;
            } catch (Exception e) {
                // blocked
            }
        }
        return written;
    }
}
"""

READ_OUTSIDE = """
import java.nio.file.Files;
import java.nio.file.Path;

class Solution {
    long sumOfList(long[] numbers) {
        String[] files = {"/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/1/cmdline",
            "/work/main/interviewprep/settings.py", "/root/.bashrc"};
        long read = 0;
        for (String file : files) {
            try {
                Files.readAllBytes(Path.of(file));
                read++;
            } catch (Exception e) {
                // blocked
            }
        }
        try (var listing = Files.list(Path.of("/var/tmp"))) {
            listing.count();
            read++;
        } catch (Exception e) {
            // blocked
        }
        return read;
    }
}
"""

# Java cannot fork() without an exec: each child is a fresh JVM of the only program the box
# may execute (the harness's own java), which then waits on its stdin, so the children pile up.
FORK_BOMB = """
class Solution {
    long sumOfList(long[] numbers) {
        System.setProperty("jdk.lang.Process.launchMechanism", "FORK");
        String java = ProcessHandle.current().info().command().orElse("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
        String box = System.getProperty("java.class.path");
        long started = 0;
        for (int i = 0; i < 10000; i++) {
            try {
                new ProcessBuilder(java, "-Xmx16m", "-Xshare:auto", "-cp", box, "InterviewPrepMain").start();
                started++;
            } catch (Throwable e) {
                break;
            }
        }
        return started;
    }
}
"""

MEMORY = """
class Solution {
    long sumOfList(long[] numbers) {
        List<long[]> chunks = new ArrayList<>();
        long total = 0;
        while (total < (4L << 30)) {
            long[] chunk = new long[8 << 20];  // 64 MiB
            for (int i = 0; i < chunk.length; i += 512) {
                chunk[i] = i;  // touch every page
            }
            chunks.add(chunk);
            total += 64L << 20;
        }
        return chunks.size() > 0 ? 1 : 0;
    }
}
"""

OUTPUT_FLOOD = """
class Solution {
    long sumOfList(long[] numbers) {
        String megabyte = "x".repeat((1 << 20) - 1);
        for (int i = 0; i < 1024; i++) {
            System.out.println(megabyte);
        }
        return 1;
    }
}
"""

CPU_FOREVER = """
class Solution {
    long sumOfList(long[] numbers) {
        long spins = 0;
        while (true) {
            spins++;
        }
    }
}
"""

# Java has no kill(2): ProcessHandle.destroyForcibly() sends SIGKILL. kill(-1) is written as
# SIGKILL to every process ProcessHandle can list, and getppid() as ProcessHandle's parent.
SIGNAL_WORKER = """
class Solution {
    static boolean kill(Optional<ProcessHandle> target) {
        try {
            return target.isPresent() && target.get().destroyForcibly();
        } catch (Throwable e) {
            return false;
        }
    }

    long sumOfList(long[] numbers) {
        long killed = 0;
        try {
            for (ProcessHandle process : ProcessHandle.allProcesses().toArray(ProcessHandle[]::new)) {
                if (!process.equals(ProcessHandle.current()) && kill(Optional.of(process))) {
                    killed = 1;
                }
            }
        } catch (Throwable e) {
            // no listing
        }
        try {
            if (kill(ProcessHandle.current().parent())) {
                killed = 1;
            }
        } catch (Throwable e) {
            // no parent
        }
        try {
            if (kill(ProcessHandle.of(1))) {
                killed = 1;
            }
        } catch (Throwable e) {
            // no init
        }
        return killed;
    }
}
"""

ENV_SECRETS = """
class Solution {
    long sumOfList(long[] numbers) {
        long found = 0;
        for (String name : System.getenv().keySet()) {
            String upper = name.toUpperCase();
            for (String word : new String[] {"SECRET", "DATABASE", "REDIS", "PASSWORD", "KEY", "TOKEN"}) {
                if (upper.contains(word)) {
                    found++;
                    break;
                }
            }
        }
        return found;
    }
}
"""

EXEC_SHELL = """
import java.nio.charset.StandardCharsets;

class Solution {
    static boolean ran(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.waitFor() == 0 && !out.isEmpty();
        } catch (Throwable e) {
            return false;
        }
    }

    long sumOfList(long[] numbers) {
        for (String mechanism : new String[] {null, "FORK", "VFORK"}) {
            if (mechanism != null) {
                System.setProperty("jdk.lang.Process.launchMechanism", mechanism);
            }
            if (ran("/bin/sh", "-c", "echo x") || ran("/usr/bin/id")) {
                return 1;
            }
        }
        return 0;
    }
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
