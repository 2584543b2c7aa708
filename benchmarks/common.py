"""Shared machinery of the submit and pipeline benchmarks.

A benchmark owns a throwaway PostgreSQL database and two Redis databases (14 for the cache,
15 for locks and the broker, as `config.py` derives them), starts the Procfile's own command
lines on a port nobody else uses (and, for the HTTP ones, a bare Django beside them on a second
port), drives them with persistent HTTP connections, and stops every process it started, also
on Ctrl-C. Nothing here asserts a time: benchmarks print numbers.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from interviewprep import processes  # noqa: E402 - importable once ROOT is on the path

PG_HOST = os.environ.get("BENCH_PG_HOST", "127.0.0.1")
PG_PORT = os.environ.get("BENCH_PG_PORT", "5432")
PG_USER = os.environ.get("BENCH_PG_USER", "postgres")
PG_PASSWORD = os.environ.get("BENCH_PG_PASSWORD", "")
REDIS_HOST = os.environ.get("BENCH_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("BENCH_REDIS_PORT", "6379"))
# The cache on 14 makes config.py put locks and the broker on 15: both are flushed at start,
# so no other setup on this machine may use them (tests use 10/11, `make run` 0/1).
CACHE_DB = 14
STATE_DB = 15
WEB_PORT = int(os.environ.get("BENCH_PORT", "18080"))
BARE_PORT = int(os.environ.get("BENCH_BARE_PORT", "18090"))
BARE_SETTINGS = "benchmarks.bare_settings"
# As many processes as the Procfile's web line (each serves one sync view at a time, as a sync
# worker does): a server with more processes would also take a larger share of a shared
# machine's CPU.
BARE_WORKERS = 8


class BenchFailure(RuntimeError):
    """Something that is not a number went wrong (a process died, a request was refused)."""


# --- environment and database -------------------------------------------------------------


def database_url(name: str) -> str:
    auth = PG_USER + (f":{PG_PASSWORD}" if PG_PASSWORD else "")
    return f"postgres://{auth}@{PG_HOST}:{PG_PORT}/{name}"


def bench_env(db_name: str, settings_module: str = "interviewprep.settings", **extra: str) -> dict[str, str]:
    """The environment of every process of one benchmark run (and of the script itself)."""
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": settings_module,
            "DATABASE_URL": database_url(db_name),
            "REDIS_URL": f"redis://{REDIS_HOST}:{REDIS_PORT}/{CACHE_DB}",
            "PORT": str(WEB_PORT),
            "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            # Neither throttling nor overload refusal may stand between the load and the code.
            "SUBMIT_RATE": "off",
            "EVALUATE_QUEUE_LIMIT": "0",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.pop("CELERY_BROKER_URL", None)
    env.update(extra)
    return env


def _admin_connection():
    """An autocommit connection to the server's `postgres` database, to create and drop others."""
    import psycopg

    return psycopg.connect(
        host=PG_HOST,
        port=PG_PORT,
        user=PG_USER,
        password=PG_PASSWORD or None,
        dbname="postgres",
        autocommit=True,
        connect_timeout=5,
    )


def recreate_database(name: str) -> None:
    """A fresh, empty database: table sizes left by an earlier run would skew the numbers."""
    import psycopg

    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise BenchFailure(f"unsafe database name {name!r}")
    try:
        conn = _admin_connection()
    except psycopg.Error as exc:
        raise BenchFailure(
            f"cannot reach PostgreSQL at {PG_HOST}:{PG_PORT} as {PG_USER} ({exc}); "
            "set BENCH_PG_HOST/BENCH_PG_PORT/BENCH_PG_USER/BENCH_PG_PASSWORD"
        ) from None
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


@contextlib.contextmanager
def fresh_database(name: str, *, keep: bool = False, **extra: str) -> Iterator[dict[str, str]]:
    """A benchmark's own database, migrated, with the benchmark's Redis databases emptied; its
    environment for the processes (`bench_env`'s, with `extra`); dropped at the end unless `keep`."""
    env = bench_env(name, **extra)
    recreate_database(name)
    flush_redis()
    try:
        with phase("migrate"):
            setup_django(env)
        yield env
    finally:
        from django.db import connections

        connections.close_all()
        if not keep:
            drop_database(name)


def drop_database(name: str) -> None:
    import psycopg

    with contextlib.suppress(psycopg.Error), _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def flush_redis(dbs: tuple[int, ...] = (CACHE_DB, STATE_DB)) -> None:
    import redis

    for db in dbs:
        try:
            redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=5).flushdb()
        except redis.RedisError as exc:
            raise BenchFailure(f"cannot flush Redis {REDIS_HOST}:{REDIS_PORT}/{db}: {exc}") from None


def setup_django(env: dict[str, str], *, migrate: bool = True) -> None:
    """Configure this process like the app's processes, then migrate the fresh database."""
    os.environ.update(env)
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)


@dataclass(frozen=True)
class Seeded:
    question_id: int
    # (token, attempt id) pairs; every attempt belongs to the token's user.
    pairs: list[tuple[str, int]]


INSTANT_QUESTION = {
    "title": "Benchmark question",
    "kind": "behavioral",
    "difficulty": "easy",
    "prompt": "Say anything.",
    "evaluator": "instant",
}


def seed(*, users: int, attempts_per_user: int, prefix: str = "bench", question: dict | None = None) -> Seeded:
    """Users with API tokens, a question (the instant-evaluator one unless given) and draft
    attempts, in bulk."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from attempts.models import Attempt, Question

    fields = question or INSTANT_QUESTION
    question, _ = Question.objects.get_or_create(slug=f"{prefix}-{fields['evaluator']}", defaults=fields)
    user_model = get_user_model()
    created = user_model.objects.bulk_create(
        [user_model(username=f"{prefix}-{uuid.uuid4().hex[:10]}", password="!") for _ in range(users)]
    )
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in created])
    attempts = Attempt.objects.bulk_create(
        [Attempt(user=u, question=question) for u in created for _ in range(attempts_per_user)]
    )
    token_of = {t.user_id: t.key for t in tokens}
    return Seeded(question.pk, [(token_of[a.user_id], a.pk) for a in attempts])


# --- processes ---------------------------------------------------------------------------------


def procfile_command(name: str, *, port: int = WEB_PORT) -> list[str]:
    """A Procfile line as argv, with this venv's executables: the benchmark runs the same flags."""
    return processes.procfile_argv(name, port=port)


def bare_django_command(port: int = BARE_PORT, workers: int = BARE_WORKERS) -> list[str]:
    """gunicorn with sync workers serving `bare_urls.py` under `bare_settings.py` (set by
    `Processes.bare_django`): plain Django, no DRF, no middleware, no authentication."""
    return [
        *processes.venv_tool("gunicorn"),
        "django.core.wsgi:get_wsgi_application()",
        "--bind",
        f"127.0.0.1:{port}",
        "--worker-class",
        "sync",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]


Proc = processes.Process


class Processes:
    """Every process a benchmark starts, each in its own process group, all stopped on exit.

    Used as a context manager; SIGTERM and SIGHUP are turned into KeyboardInterrupt so that
    the same `finally` that handles Ctrl-C stops the children.
    """

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.procs: list[Proc] = []
        self.logdir = Path(tempfile.mkdtemp(prefix="ip-bench-"))
        self._old_handlers: dict[int, object] = {}

    def __enter__(self) -> Processes:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, _interrupt)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop_all()
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)
        if exc_type is None:
            shutil.rmtree(self.logdir, ignore_errors=True)
        else:
            print(f"(process logs kept in {self.logdir})", file=sys.stderr)

    def start(self, name: str, argv: list[str], **extra_env: str) -> Proc:
        # Numbered by start, not by how many run: a stopped process's log is not overwritten.
        log = self.logdir / f"{name}-{len(list(self.logdir.glob('*.log')))}.log"
        proc = Proc.start(name, argv, env={**self.env, **extra_env}, log=log)
        self.procs.append(proc)
        return proc

    def stop(self, proc: Proc, grace: float = 15.0) -> None:
        proc.stop(grace)
        if proc in self.procs:
            self.procs.remove(proc)

    def stop_all(self) -> None:
        processes.stop_all(reversed(self.procs), grace=15.0)
        self.procs.clear()

    def web(self, port: int = WEB_PORT, **extra_env: str) -> Proc:
        return self._serving("web", procfile_command("web", port=port), port, **extra_env)

    def bare_django(self, port: int = BARE_PORT) -> Proc:
        return self._serving("bare-django", bare_django_command(port), port, DJANGO_SETTINGS_MODULE=BARE_SETTINGS)

    def _serving(self, name: str, argv: list[str], port: int, **extra_env: str) -> Proc:
        # Another benchmark's server on the port would answer /healthz for ours, which then dies
        # unseen on its bind: measure nobody's server rather than the wrong one.
        if processes.port_in_use(port):
            raise BenchFailure(
                f"port {port} is already in use (another benchmark or server on this machine?): "
                "wait for it to end, or set BENCH_PORT / BENCH_BARE_PORT to free ports"
            )
        proc = self.start(name, argv, **extra_env)
        wait_until(
            lambda: processes.health(port, timeout=2)[0] == 200,
            timeout=60,
            proc=proc,
            what=f"{name} to answer /healthz on {port}",
        )
        return proc

    def worker(self, *, include: str | None = None, line: str = "worker") -> Proc:
        """A Celery worker of the Procfile (`line`: worker, worker-run, worker-generate), once ready."""
        argv = procfile_command(line)
        if include:
            argv += ["--include", include]
        ready = self.logdir / f"{line}-{uuid.uuid4().hex[:6]}.ready"
        proc = self.start(line, argv, CELERY_READY_FILE=str(ready))
        wait_until(ready.exists, timeout=90, proc=proc, what=f"the Celery {line} to be ready")
        return proc

    def relay(self) -> Proc:
        return self.start("relay", procfile_command("relay"))


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def wait_until(
    predicate: Callable[[], object], *, timeout: float, proc: Proc | None = None, what: str = "", interval=0.05
):
    return processes.wait_for(
        predicate, timeout=timeout, interval=interval, message=what, process=proc, error=BenchFailure
    )


def wait_progress(
    count: Callable[[], int],
    target: int,
    *,
    proc: Proc,
    what: str,
    stall_seconds: float = 120,
    diagnose: Callable[[], str] = lambda: "",
    interval: float = 0.25,
) -> None:
    """Wait until count() reaches target; fail once it has not moved for stall_seconds (a slow
    machine only slows progress, a lost message stops it)."""
    last, moved = -1, time.monotonic()
    while True:
        current = count()
        if current >= target:
            return
        if current != last:
            last, moved = current, time.monotonic()
        if not proc.alive():
            raise BenchFailure(f"{proc.name} exited at {current}/{target} {what}:\n{proc.tail()}")
        if time.monotonic() - moved > stall_seconds:
            raise BenchFailure(f"no progress for {stall_seconds:.0f} s at {current}/{target} {what}. {diagnose()}")
        time.sleep(interval)


def process_tree(pid: int) -> list[int]:
    """The pid and its descendants, from /proc."""
    seen = [pid]
    for current in seen:
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                raw = (task / "children").read_text()
                seen.extend(int(p) for p in raw.split() if int(p) not in seen)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return seen


def cpu_seconds(pid: int) -> float:
    """User and system CPU of a process and its descendants, from /proc; children it has
    reaped (gunicorn workers recycled by --max-requests) count through its own totals."""
    total = 0
    for n, current in enumerate(process_tree(pid)):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            # The fields after the command name: utime, stime, cutime, cstime are 14-17 of stat.
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            if n == 0:
                total += int(fields[13]) + int(fields[14])
    return total / os.sysconf("SC_CLK_TCK")


def memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in KiB of one process. PSS splits pages shared by prefork children fairly."""
    rss = pss = 0
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with contextlib.suppress(FileNotFoundError, ProcessLookupError, PermissionError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


# --- load --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One kind of request, spread over the seeded (token, attempt) pairs.

    `path` and `body` may hold `{attempt}`; `key` is "fresh" (a new Idempotency-Key per
    request), "fixed" (one key per pair, the same every time) or None.
    """

    method: str
    path: str
    body: str | None = None
    key: str | None = None
    expect_status: int = 200
    expect_replayed: bool = False
    fixed_key_prefix: str = "bench-fixed"


@dataclass
class LoadResult:
    requests: int
    seconds: float
    unexpected: int
    latencies_ms: dict[str, float] = field(default_factory=dict)
    tool: str = ""
    # CPU the serving process tree spent on this load: unlike requests per second, hardly moved
    # by other work on a shared machine.
    server_cpu_seconds: float = float("nan")

    @property
    def cpu_ms_per_request(self) -> float:
        return self.server_cpu_seconds * 1000 / self.requests if self.requests else float("nan")

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def load(
    target: Target,
    pairs: list[tuple[str, int]],
    *,
    seconds: float,
    connections: int,
    port: int = WEB_PORT,
    tool: str = "auto",
) -> LoadResult:
    if tool == "wrk" or (tool == "auto" and have_wrk()):
        return _load_wrk(target, pairs, seconds=seconds, connections=connections, port=port)
    return _load_python(target, pairs, seconds=seconds, connections=connections, port=port)


_WRK_SCRIPT = r"""
local items = {%(items)s}
local method, path_t, body_t, key_mode = %(method)s, %(path)s, %(body)s, %(key)s
local fixed_prefix, run_id = %(fixed_prefix)s, %(run_id)s
local expect_status, expect_replayed = %(expect_status)d, %(expect_replayed)s
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  n, ok, bad = 0, 0, 0
  pos = (tid * 7919) %% #items
end

function request()
  pos = pos %% #items + 1
  n = n + 1
  local item = items[pos]
  local headers = {["Authorization"] = "Token " .. item[1], ["Content-Type"] = "application/json"}
  if key_mode == "fresh" then
    headers["Idempotency-Key"] = run_id .. "-" .. tid .. "-" .. n
  elseif key_mode == "fixed" then
    headers["Idempotency-Key"] = fixed_prefix .. "-" .. item[2]
  end
  local path = string.gsub(path_t, "{attempt}", item[2])
  local body = nil
  if body_t ~= nil then body = string.gsub(body_t, "{attempt}", item[2]) end
  return wrk.format(method, path, headers, body)
end

-- Header names are case-insensitive (uvicorn's httptools writes them in lower case).
function replayed(headers)
  for name, value in pairs(headers) do
    if string.lower(name) == "idempotent-replayed" then return value == "true" end
  end
  return false
end

function response(status, headers, body)
  if status == expect_status and (not expect_replayed or replayed(headers)) then
    ok = ok + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local good, wrong = 0, 0
  for _, t in ipairs(threads) do
    good = good + t:get("ok")
    wrong = wrong + t:get("bad")
  end
  io.write(string.format(
    'WRKJSON {"requests": %%d, "seconds": %%f, "ok": %%d, "bad": %%d, "errors": %%d, ' ..
    '"p50": %%f, "p90": %%f, "p99": %%f, "max": %%f}\n',
    summary.requests, summary.duration / 1e6, good, wrong,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status
      + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000))
end
"""


def _lua(value) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # a JSON string is a valid Lua string literal for these values


def _load_wrk(target: Target, pairs, *, seconds: float, connections: int, port: int) -> LoadResult:
    script = _WRK_SCRIPT % {
        "items": ",".join(f'{{"{token}", "{attempt}"}}' for token, attempt in pairs),
        "method": _lua(target.method),
        "path": _lua(target.path),
        "body": _lua(target.body),
        "key": _lua(target.key),
        "fixed_prefix": _lua(target.fixed_key_prefix),
        "run_id": _lua(uuid.uuid4().hex[:12]),
        "expect_status": target.expect_status,
        "expect_replayed": _lua(target.expect_replayed),
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        # One wrk thread: on two cores every cycle the load generator burns is taken from the
        # server, and one event loop keeps 16 connections busy easily.
        out = subprocess.run(
            [
                "wrk",
                "-t1",
                f"-c{connections}",
                f"-d{max(1, round(seconds))}s",
                "--timeout",
                "10s",
                "-s",
                handle.name,
                f"http://127.0.0.1:{port}/",
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=False,
        )
    finally:
        os.unlink(handle.name)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("WRKJSON ")), None)
    if line is None:
        raise BenchFailure(f"wrk failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    data = json.loads(line[len("WRKJSON ") :])
    return LoadResult(
        requests=data["requests"],
        seconds=data["seconds"],
        unexpected=data["bad"] + data["errors"],
        latencies_ms={k: data[k] for k in ("p50", "p90", "p99", "max")},
        tool="wrk",
    )


def _request_parts(target: Target, token: str, attempt: int, run_id: str, n: int) -> tuple[str, str, dict]:
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    if target.key == "fresh":
        headers["Idempotency-Key"] = f"{run_id}-{n}"
    elif target.key == "fixed":
        headers["Idempotency-Key"] = f"{target.fixed_key_prefix}-{attempt}"
    path = target.path.replace("{attempt}", str(attempt))
    body = target.body.replace("{attempt}", str(attempt)) if target.body is not None else None
    return path, body, headers


def _python_load_process(args) -> tuple[int, int, list[float]]:
    """One load process: threads with a persistent connection each, until the deadline."""
    target, pairs, port, threads, start_at, stop_at, seed_no = args
    count = [0]
    unexpected = [0]
    latencies: list[float] = []
    lock = threading.Lock()

    def loop(thread_no: int) -> None:
        run_id = f"{uuid.uuid4().hex[:12]}-{seed_no}-{thread_no}"
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        pos = (seed_no * 7919 + thread_no * 104729) % len(pairs)
        n, local_lat, local_bad = 0, [], 0
        while time.time() < start_at:
            time.sleep(0.001)
        while time.time() < stop_at:
            pos = (pos + 1) % len(pairs)
            n += 1
            token, attempt = pairs[pos]
            path, body, headers = _request_parts(target, token, attempt, run_id, n)
            began = time.perf_counter()
            try:
                conn.request(target.method, path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                good = response.status == target.expect_status and (
                    not target.expect_replayed or response.getheader("Idempotent-Replayed") == "true"
                )
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                good = False
            local_lat.append((time.perf_counter() - began) * 1000)
            local_bad += not good
        conn.close()
        with lock:
            count[0] += len(local_lat)
            unexpected[0] += local_bad
            latencies.extend(local_lat)

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return count[0], unexpected[0], latencies


def _load_python(target: Target, pairs, *, seconds: float, connections: int, port: int) -> LoadResult:
    """Fallback when wrk is missing: two processes of threads (the GIL caps one process).
    It costs far more CPU than wrk, which the server then lacks: install wrk for real numbers."""
    procs = 2
    per_proc = max(1, connections // procs)
    start_at = time.time() + 1.0
    stop_at = start_at + seconds
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(procs) as pool:
        parts = pool.map(
            _python_load_process, [(target, pairs, port, per_proc, start_at, stop_at, i) for i in range(procs)]
        )
    lat = sorted(x for _, _, ls in parts for x in ls)
    return LoadResult(
        requests=sum(c for c, _, _ in parts),
        seconds=seconds,
        unexpected=sum(u for _, u, _ in parts),
        latencies_ms={
            "p50": percentile(lat, 50),
            "p90": percentile(lat, 90),
            "p99": percentile(lat, 99),
            "max": lat[-1] if lat else 0.0,
        },
        tool="python",
    )


class Client:
    """One persistent HTTP connection, for the scripted requests of a benchmark."""

    def __init__(self, port: int = WEB_PORT, token: str | None = None, timeout: float = 30):
        self.port = port
        self.token = token
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def request(self, method: str, path: str, body: dict | str | None = None, headers: dict | None = None):
        """(status, decoded JSON, response). A str body is sent byte for byte."""
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if self.token:
            all_headers["Authorization"] = f"Token {self.token}"
        payload = body if isinstance(body, str) or body is None else json.dumps(body)
        try:
            self.conn.request(method, path, body=payload, headers=all_headers)
            response = self.conn.getresponse()
        except TimeoutError:
            # No answer in time is an answer to report, not a closed connection to retry.
            self.conn.close()
            raise
        except (OSError, http.client.HTTPException):
            # gunicorn closes a keep-alive connection idle for 2 s, and a worker recycled by
            # --max-requests closes all of its own: reconnect once (every POST here carries an
            # Idempotency-Key, so sending it again is safe).
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.conn.request(method, path, body=payload, headers=all_headers)
            response = self.conn.getresponse()
        raw = response.read()
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = raw.decode(errors="replace")
        return response.status, data, response

    def close(self) -> None:
        self.conn.close()


# --- numbers -----------------------------------------------------------------------------------


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), round(p / 100 * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISS"


def print_table(headers: list[str], rows: list[list[object]]) -> None:
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@contextlib.contextmanager
def phase(title: str) -> Iterator[None]:
    print(f"\n-- {title}", flush=True)
    began = time.monotonic()
    yield
    print(f"   ({time.monotonic() - began:.1f} s)", flush=True)


def machine_note() -> str:
    """The state of a shared machine, printed with the numbers so a reader can weigh them."""
    load1, load5, _ = os.getloadavg()
    note = f"{os.cpu_count()} CPUs, load average {load1:.2f} (1 min) {load5:.2f} (5 min)"
    with contextlib.suppress(OSError, ValueError, IndexError):
        some = Path("/proc/pressure/cpu").read_text().split()
        note += f", CPU pressure {some[2].split('=')[1]}% of the last minute"
    return note


# --- loads measured side by side ---------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One measured load: one kind of request to one server, over the run's (token, attempt)
    pairs or, when `pairs` is given, over those only (one pair: every connection sends the same
    request at once)."""

    name: str
    label: str
    target: Target
    port: int = WEB_PORT
    pairs: tuple[tuple[str, int], ...] | None = None


@dataclass(frozen=True)
class Ratio:
    """A load's rate over a baseline load's, with the target the verdict is on."""

    load: str
    baseline: str
    target: float


def interleaved_rounds(
    loads: list[Load],
    pairs: list[tuple[str, int]],
    *,
    rounds: int,
    seconds: float,
    warmup: float,
    connections: int,
    servers: dict[int, Proc],
    tool: str = "auto",
) -> dict[str, list[LoadResult]]:
    """An unmeasured warm-up of every load, then `rounds` rounds of each load once, the order
    rotated every round so that a shared machine's drift falls on every load alike. `servers`
    are the processes serving each port."""
    results: dict[str, list[LoadResult]] = {item.name: [] for item in loads}

    def run(item: Load, length: float) -> LoadResult:
        server = servers[item.port]
        cpu_before = cpu_seconds(server.pid)
        result = load(
            item.target, list(item.pairs or pairs), seconds=length, connections=connections, port=item.port, tool=tool
        )
        result.server_cpu_seconds = cpu_seconds(server.pid) - cpu_before
        for proc in servers.values():
            if not proc.alive():
                raise BenchFailure(f"{proc.name} died:\n{proc.tail()}")
        return result

    with phase(f"warm-up: {warmup:g} s of each load, not counted"):
        for item in loads:
            run(item, warmup)
    for round_no in range(rounds):
        with phase(f"round {round_no + 1}/{rounds}: {seconds:g} s per load, {connections} connections"):
            shift = round_no % len(loads)
            for item in loads[shift:] + loads[:shift]:
                result = run(item, seconds)
                results[item.name].append(result)
                print(
                    f"   {item.name:<14} {result.rps:8.1f} req/s  p50 {result.latencies_ms['p50']:6.1f} ms  "
                    f"p99 {result.latencies_ms['p99']:6.1f} ms  CPU {result.cpu_ms_per_request:5.2f} ms/req  "
                    f"unexpected {result.unexpected}  ({result.tool})",
                    flush=True,
                )
                # A breath between loads: what one load left behind (a publish, a recycled
                # worker) should not run inside the next one's measurement.
                time.sleep(0.5)
    return results


def report_ratios(loads: list[Load], results: dict[str, list[LoadResult]], ratios: list[Ratio]) -> dict[str, float]:
    """A table of every load's rounds and the ratios with their verdicts; returns the ratios.

    A ratio is the median of the per-round ratios: loads of one round ran seconds apart, so
    their quotient is the one least moved by a machine whose speed drifts between rounds."""
    rounds = max(len(runs) for runs in results.values())
    rows = []
    for item in loads:
        runs = results[item.name]
        rows.append(
            [
                item.name,
                item.label,
                *[r.rps for r in runs],
                median([r.rps for r in runs]),
                median([r.latencies_ms["p50"] for r in runs]),
                median([r.latencies_ms["p99"] for r in runs]),
                median([r.cpu_ms_per_request for r in runs]),
                sum(r.unexpected for r in runs),
            ]
        )
    print()
    rounds_headers = [f"r{i + 1} req/s" for i in range(rounds)]
    print_table(["load", "what", *rounds_headers, "median req/s", "p50 ms", "p99 ms", "CPU ms/req", "unexpected"], rows)
    print()
    found: dict[str, float] = {}
    for ratio in ratios:
        mine, base = results[ratio.load], results[ratio.baseline]
        per_round = [m.rps / b.rps for m, b in zip(mine, base, strict=True) if b.rps]
        value = median(per_round)
        of_medians = median([r.rps for r in mine]) / (median([r.rps for r in base]) or float("nan"))
        found[f"{ratio.load}/{ratio.baseline}"] = value
        print(
            f"{ratio.load} / {ratio.baseline} = {value:.3f}  target >= {ratio.target}  {verdict(value >= ratio.target)}"
            f"  (ratio of medians {of_medians:.2f}; per round {', '.join(f'{x:.2f}' for x in per_round)})"
        )
    return found


def run_main(main: Callable[[], None]) -> None:
    """Exit 0 with numbers (targets missed or not), 1 on a real failure, 130 on Ctrl-C."""
    try:
        main()
    except KeyboardInterrupt:
        print("\ninterrupted: every process started was stopped", file=sys.stderr)
        raise SystemExit(130) from None
    except (BenchFailure, processes.ProcessError) as exc:
        print(f"\nbenchmark failed: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
