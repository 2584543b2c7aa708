"""RabbitMQ for tests: a virtual host per test process on the machine's broker, and a TCP proxy
a test owns between its processes and the broker, to pause or block it. The broker itself is
never paused, alarmed or restarted: other people use it."""

from __future__ import annotations

import contextlib
import selectors
import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest
from kombu import Connection

BROKER_HOST, BROKER_PORT = "127.0.0.1", 5672
USER = PASSWORD = "guest"  # noqa: S105 - RabbitMQ's loopback-only default account

# AMQP 0-9-1: the protocol header, then frames of type, channel, size, payload, end octet.
_PROTOCOL_HEADER = 8
_FRAME_HEADER = struct.Struct(">BHI")
_METHOD_FRAME = 1
_BASIC_PUBLISH = (60, 40)


def on_both_brokers(fixture: str = "broker"):
    """Run a test on Redis and on RabbitMQ, through the `broker` (or `pausable_broker`) fixture."""
    return pytest.mark.parametrize(
        fixture, ["redis", pytest.param("amqp", id="rabbitmq", marks=pytest.mark.rabbitmq)], indirect=True
    )


def rabbitmq_url(vhost: str, *, port: int = BROKER_PORT) -> str:
    return f"amqp://{USER}:{PASSWORD}@{BROKER_HOST}:{port}/{vhost}"


def _rabbitmqctl(*args: str) -> str:
    executable = shutil.which("rabbitmqctl") or shutil.which("rabbitmqctl", path="/usr/sbin")
    if executable is None:
        raise RuntimeError("rabbitmqctl not found: `bash scripts/setup-system.sh --rabbitmq` installs RabbitMQ")
    done = subprocess.run([executable, "-q", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"rabbitmqctl {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def vhost_create(vhost: str) -> None:
    if vhost not in _rabbitmqctl("list_vhosts", "name").split():
        _rabbitmqctl("add_vhost", vhost)
    _rabbitmqctl("set_permissions", "-p", vhost, USER, ".*", ".*", ".*")


def vhost_delete(vhost: str) -> None:
    with contextlib.suppress(RuntimeError):
        _rabbitmqctl("delete_vhost", vhost)


def queues_described(vhost: str) -> dict[str, dict[str, str]]:
    """Queue name -> its type and arguments, as the broker holds them."""
    rows = _rabbitmqctl("list_queues", "-p", vhost, "--no-table-headers", "name", "type", "arguments")
    described = {}
    for line in rows.splitlines():
        name, kind, arguments = line.split("\t")
        described[name] = {"type": kind, "arguments": arguments}
    return described


def bindings_described(vhost: str) -> set[tuple[str, str, str]]:
    """(exchange, queue, routing key) of every binding to a named exchange."""
    rows = _rabbitmqctl(
        "list_bindings", "-p", vhost, "--no-table-headers", "source_name", "destination_name", "routing_key"
    )
    return {tuple(line.split("\t")) for line in rows.splitlines() if line.split("\t")[0]}


def exchange_types(vhost: str) -> dict[str, str]:
    rows = _rabbitmqctl("list_exchanges", "-p", vhost, "--no-table-headers", "name", "type")
    return {name: kind for name, kind in (line.split("\t") for line in rows.splitlines()) if name}


def queues_purge(url: str, names: list[str]) -> None:
    """Empty the named queues (those that exist), so a test meets no earlier test's messages."""
    with Connection(url, connect_timeout=5) as conn:
        channel = conn.channel()
        for name in names:
            try:
                channel.queue_purge(name)
            except Exception:  # noqa: BLE001 - not declared yet: nothing in it; the refusal closed the channel
                channel = conn.channel()


class _Pair:
    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.pending = b""  # from the client, not yet whole frames
        self.header_left = _PROTOCOL_HEADER
        self.held = b""  # whole frames held back while publishes are blocked
        self.blocked = False


class BrokerProxy:
    """Forwards 127.0.0.1:<port> to RabbitMQ, in one thread of the test's process.

    `pause()` stops forwarding anything and accepting connections (the kernel still completes
    TCP handshakes, as for a stopped server); `block_publishes()` does what RabbitMQ does under a
    memory alarm: a connection that publishes is no longer read from, from that frame on, while
    every other connection (a new one's handshake, its declarations) is served."""

    def __init__(self, vhost: str) -> None:
        self.vhost = vhost
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._pairs: list[_Pair] = []
        self._lock = threading.Lock()
        self._paused = False
        self._block = False
        self._closing = False
        self._drop = False
        self._dropped = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._loop, name=f"broker-proxy-{self.port}", daemon=True)
        self._thread.start()

    def url(self) -> str:
        return rabbitmq_url(self.vhost, port=self.port)

    def _set(self, **flags: bool) -> None:
        with self._lock:
            for name, value in flags.items():
                setattr(self, f"_{name}", value)
        self._wake_w.send(b"x")

    def pause(self) -> None:
        self._set(paused=True)

    def resume(self) -> None:
        self._set(paused=False)

    def block_publishes(self) -> None:
        self._set(block=True)

    def unblock(self) -> None:
        self._set(block=False)

    def drop_connections(self) -> None:
        """Every connection reset at once, as a broker restart would (done by the proxy's thread,
        which alone touches the sockets)."""
        self._dropped.clear()
        self._set(drop=True)
        if not self._dropped.wait(10):
            raise RuntimeError("the proxy did not drop its connections")

    def restart(self, *, down_for: float = 0.0) -> None:
        """As a broker restart looks to its clients: every connection reset, none answered for
        `down_for` seconds. The queues stay, as a restarted RabbitMQ's durable queues do."""
        self.pause()
        self.drop_connections()
        time.sleep(down_for)  # the outage itself, not a wait for anything
        self.resume()

    def stop(self) -> None:
        self._set(closing=True)
        self._thread.join(10)
        for pair in list(self._pairs):
            self._close(pair, reset=True)
        self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def _loop(self) -> None:
        while not self._closing:
            if self._drop:
                for pair in list(self._pairs):
                    self._close(pair, reset=True)
                self._drop = False
                self._dropped.set()
            with selectors.DefaultSelector() as selector:
                selector.register(self._wake_r, selectors.EVENT_READ)
                with self._lock:
                    paused, pairs = self._paused, list(self._pairs)
                if not paused:
                    selector.register(self._listener, selectors.EVENT_READ)
                    for pair in pairs:
                        if pair.blocked and not self._block:
                            self._release(pair)
                        if not pair.blocked:
                            selector.register(pair.client, selectors.EVENT_READ, pair)
                        selector.register(pair.upstream, selectors.EVENT_READ, pair)
                for key, _ in selector.select(timeout=1.0):
                    if key.fileobj is self._wake_r:
                        self._wake_r.recv(4096)
                    elif key.fileobj is self._listener:
                        self._accept()
                    else:
                        self._forward(key.data, key.fileobj)

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection((BROKER_HOST, BROKER_PORT), timeout=5)
        except OSError:
            client.close()
            return
        client.setblocking(True)
        upstream.setblocking(True)
        with self._lock:
            self._pairs.append(_Pair(client, upstream))

    def _close(self, pair: _Pair, *, reset: bool = False) -> None:
        with self._lock:
            if pair in self._pairs:
                self._pairs.remove(pair)
        for sock in (pair.client, pair.upstream):
            with contextlib.suppress(OSError):
                if reset:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()

    def _forward(self, pair: _Pair, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._close(pair)
            return
        try:
            if sock is pair.upstream:
                pair.client.sendall(data)
            else:
                self._from_client(pair, data)
        except OSError:
            self._close(pair)

    def _from_client(self, pair: _Pair, data: bytes) -> None:
        pair.pending += data
        if pair.header_left:
            head, pair.pending = pair.pending[: pair.header_left], pair.pending[pair.header_left :]
            pair.header_left -= len(head)
            pair.upstream.sendall(head)
        out = b""
        while len(pair.pending) >= _FRAME_HEADER.size:
            kind, _channel, size = _FRAME_HEADER.unpack_from(pair.pending)
            end = _FRAME_HEADER.size + size + 1
            if len(pair.pending) < end:
                break
            frame, pair.pending = pair.pending[:end], pair.pending[end:]
            method = struct.unpack_from(">HH", frame, _FRAME_HEADER.size) if kind == _METHOD_FRAME else None
            if self._block and (pair.blocked or method == _BASIC_PUBLISH):
                pair.blocked = True
                pair.held += frame
            else:
                out += frame
        if out:
            pair.upstream.sendall(out)

    def _release(self, pair: _Pair) -> None:
        held, pair.held, pair.blocked = pair.held, b"", False
        try:
            if held:
                pair.upstream.sendall(held)
        except OSError:
            self._close(pair)
