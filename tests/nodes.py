"""Worker nodes for the node drill: each one the Procfile's `worker` line under a hostname of its
own, in a process group of its own and, where the machine allows (root, `ip`, `nsenter`), in a
network namespace of its own. A node reaches PostgreSQL, Redis and the broker through a relay of
its own in this namespace, so that losing the node can be made a machine gone: its link cut
first, then its whole group killed, and the services never see its connections close."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from interviewprep.processes import procfile_argv
from tests.processes import Worker, process_env, test_database_url, wait_for

LOOPBACK = {"127.0.0.1", "localhost"}
# One /30 per node out of a block nothing on this machine routes; the host side is .1, the node .2.
_SUBNET = "10.231.{index}.{host}"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def namespaces_unavailable() -> str | None:
    """Why a node cannot have a network namespace here, or None when it can."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "network namespaces need root on Linux"
    if not (shutil.which("ip") and shutil.which("nsenter")):
        return "the `ip` and `nsenter` tools are missing"
    name = f"ipn-probe-{os.getpid()}"
    try:
        _ip("netns", "add", name)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        return f"`ip netns add` failed: {getattr(exc, 'stderr', b'') or exc}"
    with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
        _ip("netns", "del", name)
    return None


class Forwarder:
    """TCP from `listen` to `upstream`, a pair of threads per connection. `partition()` stops
    relaying and holds every connection open as it is: the upstream sees no FIN or RST from a
    node that died behind it, as a server sees nothing of a machine whose network went first."""

    def __init__(self, listen_host: str, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.server = socket.create_server((listen_host, 0))
        self.address = self.server.getsockname()[:2]
        self.partitioned = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name=f"forward {self.address}").start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.server.accept()
            except OSError:
                return  # closed
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                downstream.close()
                continue
            upstream.settimeout(None)
            for sock in (downstream, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [downstream, upstream]
            for source, sink in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if self.partitioned.is_set():
                return  # neither the bytes nor the close go through; both sockets stay open
            if not data:
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)
                return
            try:
                sink.sendall(data)
            except OSError:
                return

    def partition(self) -> None:
        self.partitioned.set()

    def close(self) -> None:
        self.partitioned.set()
        self.server.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class NodeNetwork:
    """A node's way to the services: with `namespace`, a network namespace joined to this one by
    a veth pair, the forwarders listening on the host's end; without, forwarders on the loopback."""

    def __init__(self, index: int, *, namespace: bool) -> None:
        self.index = index
        self.namespace = f"ipn-{os.getpid()}-{index}" if namespace else None
        self.link = f"ipn{os.getpid()}n{index}"[:15]
        self.forwarders: dict[tuple[str, int], Forwarder] = {}
        self.cut_done = False
        self.listen_host = "127.0.0.1"
        if self.namespace:
            self.listen_host = _SUBNET.format(index=index, host=1)
            node_host = _SUBNET.format(index=index, host=2)
            try:
                _ip("netns", "add", self.namespace)
                _ip("link", "add", self.link, "type", "veth", "peer", "name", "eth0", "netns", self.namespace)
                _ip("addr", "add", f"{self.listen_host}/30", "dev", self.link)
                _ip("link", "set", self.link, "up")
                _ip("-n", self.namespace, "addr", "add", f"{node_host}/30", "dev", "eth0")
                _ip("-n", self.namespace, "link", "set", "eth0", "up")
                _ip("-n", self.namespace, "link", "set", "lo", "up")
            except BaseException:
                self.close()
                raise

    def launcher(self) -> list[str]:
        """What a command is run under to live on this network (nsenter execs it: same pid)."""
        return ["nsenter", f"--net=/run/netns/{self.namespace}", "--"] if self.namespace else []

    def url(self, url: str) -> str:
        """`url` with its loopback host and port replaced by this node's forwarder to them."""
        parts = urlsplit(url)
        if parts.hostname not in LOOPBACK or parts.port is None:
            raise ValueError(f"a node reaches only loopback TCP services, not {url!r}")
        upstream = ("127.0.0.1", parts.port)
        if upstream not in self.forwarders:
            self.forwarders[upstream] = Forwarder(self.listen_host, upstream)
        host, port = self.forwarders[upstream].address
        userinfo = parts.netloc.rpartition("@")[0]
        return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}:{port}" if userinfo else f"{host}:{port}"))

    def cut(self) -> None:
        """The node's network gone at once: nothing more in or out, nothing closed on the far side."""
        for forwarder in self.forwarders.values():
            forwarder.partition()
        if self.namespace and not self.cut_done:
            _ip("link", "del", self.link)  # its peer in the namespace goes with it
        self.cut_done = True

    def close(self) -> None:
        for forwarder in self.forwarders.values():
            forwarder.close()
        if self.namespace:
            if not self.cut_done:
                with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                    _ip("link", "del", self.link)
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                _ip("netns", "del", self.namespace)


@dataclass
class Node:
    name: str  # its Celery hostname's first part, e.g. evaluate-node1
    process: Worker
    network: NodeNetwork
    started_at: float = 0.0  # time.monotonic() when it was ready
    killed: bool = field(default=False)

    def lose(self) -> None:
        """The machine gone: its network cut, then its whole process group killed."""
        self.network.cut()
        self.process.kill(signal.SIGKILL)
        self.killed = True

    def stop(self) -> None:
        self.process.stop(grace=0 if self.killed else 10)
        self.network.close()


def start_node(tmp_path: Path, index: int, *, namespace: bool, children: int | None = None, **env: str) -> Node:
    """The Procfile's `worker` line as node `index`: hostname evaluate-node<index>@<machine>,
    `children` prefork children if given, every service reached through the node's own network;
    ready when Celery says so."""
    name = f"evaluate-node{index}"
    network = NodeNetwork(index, namespace=namespace)
    try:
        argv = procfile_argv("worker", port=0)
        argv[argv.index("--hostname") + 1] = f"{name}@%h"
        if children is not None:
            argv[argv.index("--concurrency") + 1] = str(children)
        ready = tmp_path / f"{name}-{uuid.uuid4().hex[:6]}.ready"
        base = process_env()
        node_env = {
            "DATABASE_URL": network.url(test_database_url()),
            "REDIS_URL": network.url(base["REDIS_URL"]),
            "CELERY_BROKER_URL": network.url(base["CELERY_BROKER_URL"]),
            "CELERY_READY_FILE": str(ready),
            **env,
        }
        log = tmp_path / f"{name}.log"
        process = Worker.start(name, [*network.launcher(), *argv], env=process_env(**node_env), log=log)
    except BaseException:
        network.close()
        raise
    node = Node(name, process, network)
    try:
        wait_for(ready.exists, timeout=90, interval=0.1, message=f"{name} to be ready", process=process)
    except BaseException:
        node.stop()
        raise
    return node
