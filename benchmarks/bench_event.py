"""A hiring event in miniature: candidates all submitting at once, then a burst of sign-ups.

The Procfile's own `web`, `worker`, `worker-run`, `worker-generate` and `relay` lines run for the
whole benchmark (`beat` is left out: its one schedule purges idempotency keys hourly), with the
submit rate, the registration rate and the overload refusal switched off.

(1) Candidates. N of them register through the API beforehand (`POST /api/v1/auth/register/`,
    whose answer carries the token), as 8 clients at a time; one journey by another account on
    each web process warms them up. Then a `threading.Barrier` releases N threads at once, each
    on one persistent connection, once the web has accepted them all: open the bank's warm-up
    question `sum-of-list` (loaded by `load_questions`), start an attempt, submit the bank's
    reference answer in Python, and wait with
    `GET /api/v1/attempts/{id}/?min_version=<version + 1>&wait=20`, again with each newer
    version, until the attempt shows that submission's result (docs/api.md). Every request must
    answer 2xx and every answer score 100, or the benchmark fails. Printed: every step's requests
    and latency, submit-to-result p50/p95/p99/max (target p99 <= 5 s), and where each
    submission's time went, from the rows' own timestamps (all stamped by this machine's clock):
      web queueing          submit sent -> Submission.created_at
      relay                 Submission.created_at -> Outbox.published_at
      waiting for a worker  Outbox.published_at -> the first JobTry.started_at
      in the worker         JobTry.started_at -> the last try's finished_at (sandbox included)
      notification          JobTry.finished_at -> the client holding the result
    and, by the web process holding each candidate's connection (from `ss`), the steps that wait
    on the web.
(2) Sign-ups. N registrations released by a barrier, one connection each, with Django's default
    password hasher. Target: all answered (201) within 30 s; printed: how many were, their
    p50/p99, and by web process. Meanwhile a probe every 100 ms of `GET /healthz` and of an
    authenticated `GET /api/v1/questions/`, each timed from when it was due: p50/p99/max during
    the burst against the seconds before it (no target; it shows whether others are still served).

Takes about two minutes with the defaults, most of it hashing passwords.

    .venv/bin/python benchmarks/bench_event.py [--candidates 100] [--signups 100] [--only 1,2]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379, whose databases 14 and 15 it flushes; port 18080 (BENCH_PORT).
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402

DB_NAME = "ip_bench_event"
QUESTION_SLUG = "sum-of-list"
REGISTER_PATH = "/api/v1/auth/register/"
PASSWORD = "an event password, 2 coffees"
WORKER_LINES = ("worker", "worker-run", "worker-generate")
REGISTER_CLIENTS = 8  # as many as the web line's processes: more would only queue
WAIT_SECONDS = 20  # per wait request; the client's socket timeout outlasts it
CLIENT_TIMEOUT_S = 120
RESULT_DEADLINE_S = 120
TARGET_P99_S = 5.0
SIGNUP_LIMIT_S = 30.0
PROBE_PATHS = ("/healthz", "/api/v1/questions/")
PROBE_INTERVAL_S = 0.1
PROBE_CLIENTS = 32
# The probes' first second opens their connections (and a process's first /healthz asks what it
# asks once): left out of the baseline, the seconds after it measured.
PROBE_WARMUP_S = 1.0
BASELINE_S = 4.0
STEPS = ("open question", "start attempt", "submit", "wait for result")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=100, help="(1) candidates released at once")
    parser.add_argument("--signups", type=int, default=100, help="(2) registrations released at once")
    parser.add_argument("--only", default="1,2", help="which parts to run, e.g. 2")
    parser.add_argument("--keep-db", action="store_true", help=f"leave the {DB_NAME} database for inspection")
    args = parser.parse_args()
    args.parts = {p.strip() for p in args.only.split(",") if p.strip()}
    if not args.parts or not args.parts <= {"1", "2"}:
        parser.error("--only takes a comma-separated subset of 1,2")
    return args


# --- requests ----------------------------------------------------------------------------------


@dataclass
class Journey:
    """One client's requests: (step, status or None for no answer, ms), and wall-clock stamps
    to set beside the rows' (`time.time()`, the clock the app's processes stamp with)."""

    calls: list[tuple[str, int | None, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    submission_id: int | None = None
    submit_sent: float | None = None
    result_seen: float | None = None
    score: float | None = None
    web_process: int | None = None  # the pid of the web process that accepted its connection


def call(client: common.Client, journey: Journey, step: str, method: str, path: str, *, expect: int, **kw):
    """The answer's data when it is `expect`, else None with the failure noted."""
    began = time.perf_counter()
    try:
        status, data, _ = client.request(method, path, **kw)
    except (OSError, http.client.HTTPException) as exc:
        journey.calls.append((step, None, (time.perf_counter() - began) * 1000))
        journey.failures.append(f"{step}: no answer ({type(exc).__name__}: {exc})")
        return None
    journey.calls.append((step, status, (time.perf_counter() - began) * 1000))
    if status != expect:
        journey.failures.append(f"{step}: {status} {str(data)[:200]}")
        return None
    return data


def candidate_journey(client: common.Client, journey: Journey, question_id: int, answer: str) -> None:
    """Open the question, start an attempt, submit, wait for that submission's result."""
    if call(client, journey, "open question", "GET", f"/api/v1/questions/{question_id}/", expect=200) is None:
        return
    attempt = call(
        client, journey, "start attempt", "POST", "/api/v1/attempts/", body={"question_id": question_id}, expect=201
    )
    if attempt is None:
        return
    journey.submit_sent = time.time()
    accepted = call(
        client,
        journey,
        "submit",
        "POST",
        f"/api/v1/attempts/{attempt['id']}/submissions/",
        body={"answer": answer, "language": "python"},
        headers={"Idempotency-Key": f"event-{attempt['id']}"},
        expect=202,
    )
    if accepted is None:
        return
    journey.submission_id, version = accepted["submission_id"], accepted["version"]
    deadline = time.monotonic() + RESULT_DEADLINE_S
    while time.monotonic() < deadline:
        path = f"/api/v1/attempts/{attempt['id']}/?min_version={version + 1}&wait={WAIT_SECONDS}"
        view = call(client, journey, "wait for result", "GET", path, expect=200)
        if view is None:
            return
        if view["latest_submission_id"] == journey.submission_id and view["status"] in ("completed", "failed"):
            journey.result_seen = time.time()
            journey.score = (view.get("result") or {}).get("score")
            return
        version = view["version"]
    journey.failures.append(f"no result within {RESULT_DEADLINE_S} s")


class Release:
    """N threads, each on a connection of its own, released at once by a barrier, once the web's
    processes have accepted every connection (a connection stays with the process that accepted
    it). Records when they were released and which web process holds each one's connection."""

    def __init__(self, n: int, web: common.Proc):
        self.n = n
        self.web = web
        self.released = float("nan")
        self.process_of: list[int | None] = [None] * n
        self._ports: list[int | None] = [None] * n
        self._barrier = threading.Barrier(n, action=self._accepted)

    def run(self, body: Callable[[int, Release], None]) -> None:
        """`body(i, release)` on n threads; each calls `release.arrive(i, client)` when ready."""
        # Daemons: Ctrl-C must not wait for a thread stuck on a socket.
        threads = [threading.Thread(target=body, args=(i, self), daemon=True) for i in range(self.n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def arrive(self, i: int, client: common.Client) -> None:
        client.conn.connect()
        self._ports[i] = client.conn.sock.getsockname()[1]
        self._barrier.wait()

    def _accepted(self) -> None:
        deadline = time.monotonic() + 5
        while len(held := web_connections()) < self.n and time.monotonic() < deadline:
            time.sleep(0.05)
        self.process_of = [held.get(port) for port in self._ports]
        self.released = time.time()

    def spread(self) -> list[int]:
        """Connections per web process (every process of the web line), most first."""
        counts = Counter(self.process_of)
        return sorted((counts.get(pid, 0) for pid in web_processes(self.web)), reverse=True)


def web_connections() -> dict[int, int]:
    """{client port: pid of the web process holding that connection to the web port}, from ss."""
    out = subprocess.run(
        ["ss", "-Htnp", "state", "established", f"( sport = :{common.WEB_PORT} )"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    held = {}
    for line in out.splitlines():
        fields = line.split()
        found = re.search(r"pid=(\d+)", line)
        if len(fields) >= 4 and found:
            held[int(fields[3].rsplit(":", 1)[1])] = int(found.group(1))
    return held


def web_processes(web: common.Proc) -> set[int]:
    """The web line's serving processes: the gunicorn arbiter's children."""
    tasks = Path(f"/proc/{web.pid}/task").iterdir()
    return {int(pid) for task in tasks for pid in (task / "children").read_text().split()}


def warm_every_process(web: common.Proc, token: str, question) -> tuple[int, int, int]:
    """One journey served by each web process, so that none meets its first submit (imports,
    the toolchains' versions, asked once per process) during the measurement. A connection goes
    to whichever process accepts it, and the first to wake takes every connection waiting:
    batches of several sizes are opened until each process has held one, or 60 batches.
    Returns (web processes, processes warmed, connections opened)."""
    processes = web_processes(web)
    pending, opened = set(processes), 0
    for size in [1, 2, 4, 8, 16, 32] * 10:
        if not pending:
            break
        clients = [common.Client(token=token, timeout=CLIENT_TIMEOUT_S) for _ in range(size)]
        for client in clients:
            client.conn.connect()
        opened += size
        by_port = {client.conn.sock.getsockname()[1]: client for client in clients}
        held = common.wait_until(
            lambda ports=by_port.keys(): (found := web_connections()).keys() >= ports and found,
            timeout=10,
            what="the web to accept the warm-up connections",
        )
        for port, client in by_port.items():
            if held[port] in pending:
                journey = Journey()
                candidate_journey(client, journey, question.pk, question.reference_answer)
                if journey.failures or journey.score != 100:
                    raise common.BenchFailure(f"a warm-up journey went wrong ({journey.score}): {journey.failures}")
                pending.discard(held[port])
        for client in clients:
            client.close()
    return len(processes), len(processes) - len(pending), opened


def register_many(usernames: list[str]) -> list[str]:
    """Tokens of new accounts, registered through the API by REGISTER_CLIENTS clients at a time."""

    def some(names: list[str]) -> list[str]:
        client, tokens = common.Client(timeout=CLIENT_TIMEOUT_S), []
        for name in names:
            status, data, _ = client.request("POST", REGISTER_PATH, body={"username": name, "password": PASSWORD})
            if status != 201:
                raise common.BenchFailure(f"registering {name} answered {status}: {data}")
            tokens.append(data["token"])
        client.close()
        return tokens

    chunks = [usernames[i::REGISTER_CLIENTS] for i in range(REGISTER_CLIENTS)]
    with ThreadPoolExecutor(REGISTER_CLIENTS) as pool:
        by_chunk = list(pool.map(some, chunks))
    # Back in the order of `usernames`.
    return [by_chunk[i % REGISTER_CLIENTS][i // REGISTER_CLIENTS] for i in range(len(usernames))]


def running_check(procs: common.Processes) -> None:
    for proc in procs.procs:
        if not proc.alive():
            raise common.BenchFailure(f"{proc.name} died:\n{proc.tail()}")


def _ps(values: list[float], ps=(50, 95, 99)) -> list[float]:
    values = sorted(values)
    return [*(common.percentile(values, p) for p in ps), values[-1] if values else float("nan")]


# --- (1) candidates ----------------------------------------------------------------------------


def part_1(procs: common.Processes, web: common.Proc, args, question) -> list[str]:
    n = args.candidates
    run = uuid.uuid4().hex[:6]
    with common.phase(f"(1) {n} candidates register beforehand, {REGISTER_CLIENTS} clients at a time"):
        began = time.monotonic()
        tokens = register_many([f"cand-{run}-{i}" for i in range(n + 1)])
        print(f"   {n + 1} registrations (one for the warm-up) in {time.monotonic() - began:.1f} s", flush=True)
    warm_token, tokens = tokens[0], tokens[1:]
    with common.phase("(1) warm-up: one journey served by each web process, not counted"):
        processes, warmed, opened = warm_every_process(web, warm_token, question)
        print(f"   {warmed} of the {processes} web processes warmed, {opened} connections opened to reach them")
    journeys = [Journey() for _ in range(n)]

    def candidate(i: int, release: Release) -> None:
        client = common.Client(token=tokens[i], timeout=CLIENT_TIMEOUT_S)
        release.arrive(i, client)
        candidate_journey(client, journeys[i], question.pk, question.reference_answer)
        client.close()

    with common.phase(f"(1) {n} candidates at once: open {QUESTION_SLUG}, start, submit, wait for the result"):
        release = Release(n, web)
        release.run(candidate)
        for journey, pid in zip(journeys, release.process_of, strict=True):
            journey.web_process = pid
        last = max(j.result_seen or 0 for j in journeys) - release.released
        print(f"   the last result seen {last:.1f} s after the barrier")
        print(f"   connections per web process: {', '.join(map(str, release.spread()))}")
        running_check(procs)
    return report_1(journeys)


def report_1(journeys: list[Journey]) -> list[str]:
    print(f"\n== (1) {len(journeys)} candidates at once: requests")
    rows = []
    for step in STEPS:
        calls = [(status, ms) for j in journeys for s, status, ms in j.calls if s == step]
        good = [ms for status, ms in calls if status is not None and 200 <= status < 300]
        rows.append(
            [
                step,
                len(calls),
                len(good),
                sum(1 for status, _ in calls if status is not None and not 200 <= status < 300),
                sum(1 for status, _ in calls if status is None),
                *_ps(good, (50, 99)),
            ]
        )
    common.print_table(["step", "requests", "2xx", "non-2xx", "no answer", "p50 ms", "p99 ms", "max ms"], rows)
    problems = [f"candidate {i}: {f}" for i, j in enumerate(journeys) for f in j.failures]
    scored = sum(1 for j in journeys if j.score == 100)
    print(f"\nanswers scored 100: {scored} of {len(journeys)}")
    if scored != len(journeys):
        problems.append(f"{len(journeys) - scored} of {len(journeys)} answers did not score 100")
    seen = [j for j in journeys if j.result_seen is not None]
    whole = [(j.result_seen - j.submit_sent) * 1000 for j in seen]
    if whole:
        print(f"\n== (1) where the time went, per submission ({len(seen)} with a result seen)")
        steps, retried = time_spent(seen)
        common.print_table(
            ["step", "p50 ms", "p95 ms", "p99 ms", "max ms"],
            [*([name, *_ps(values)] for name, values in steps), ["submit sent -> result seen", *_ps(whole)]],
        )
        if retried:
            print(f"   ({retried} jobs took more than one try; 'in the worker' spans all of them)")
        print_by_process(seen, dict(steps), whole)
        p99 = common.percentile(sorted(whole), 99) / 1000
        verdict = common.verdict(p99 <= TARGET_P99_S)
        print(f"\nsubmit-to-result p99 = {p99:.2f} s  target <= {TARGET_P99_S:g} s  {verdict}")
    for problem in problems[:10]:
        print(f"   {problem}")
    return problems


def print_by_process(seen: list[Journey], spans: dict[str, list[float]], whole: list[float]) -> None:
    """The steps that wait on the web, by the web process that holds the candidate's connection."""
    by_process: dict[int | None, list[int]] = {}
    for k, journey in enumerate(seen):
        by_process.setdefault(journey.web_process, []).append(k)
    print("\n== (1) by the web process that accepted the candidate's connection")
    common.print_table(
        ["web process", "candidates", "web queueing p50 ms", "notification p50 ms", "submit -> result max ms"],
        [
            [
                _process(pid),
                len(ks),
                common.median([spans["web queueing"][k] for k in ks]),
                common.median([spans["notification"][k] for k in ks]),
                max(whole[k] for k in ks),
            ]
            for pid, ks in sorted(by_process.items(), key=lambda item: -len(item[1]))
        ],
    )


def _process(pid: int | None) -> str:
    return f"pid {pid}" if pid else "?"


def time_spent(journeys: list[Journey]) -> tuple[list[tuple[str, list[float]]], int]:
    """The steps of each submission's time, in ms, from the rows the pipeline stamped; and how
    many jobs needed more than one try."""
    from attempts.models import Result, Submission
    from evaluation.models import EvaluationJob, JobTry, Outbox

    ids = [j.submission_id for j in journeys]
    created = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "created_at"))
    result_at = dict(Result.objects.filter(submission_id__in=ids).values_list("submission_id", "created_at"))
    jobs = EvaluationJob.objects.filter(kind="evaluate", subject_id__in=ids)
    submission_of = dict(jobs.values_list("pk", "subject_id"))
    published: dict[int, object] = {}
    for job_id, at in Outbox.objects.filter(job_id__in=submission_of, published_at__isnull=False).values_list(
        "job_id", "published_at"
    ):
        published[submission_of[job_id]] = min(at, published.get(submission_of[job_id], at))
    tries: dict[int, list] = {}
    for job_id, started, finished in (
        JobTry.objects.filter(job_id__in=submission_of)
        .order_by("job_id", "number")
        .values_list("job_id", "started_at", "finished_at")
    ):
        tries.setdefault(submission_of[job_id], []).append((started.timestamp(), finished.timestamp()))
    names = ("web queueing", "relay", "waiting for a worker", "in the worker", "notification")
    spans: dict[str, list[float]] = {name: [] for name in names}
    from_result: list[float] = []
    for j in journeys:
        s = j.submission_id
        if s not in published or s not in tries:
            raise common.BenchFailure(f"submission {s} has a result but no published message or no try")
        stamps = (
            j.submit_sent,
            created[s].timestamp(),
            published[s].timestamp(),
            tries[s][0][0],
            tries[s][-1][1],
            j.result_seen,
        )
        for name, start, end in zip(names, stamps, stamps[1:], strict=False):
            spans[name].append((end - start) * 1000)
        from_result.append((j.result_seen - result_at[s].timestamp()) * 1000)
    spans["(result row written -> client)"] = from_result
    return list(spans.items()), sum(1 for t in tries.values() if len(t) > 1)


# --- (2) sign-ups ------------------------------------------------------------------------------


class Prober:
    """Cheap requests on a fixed schedule, each timed from the moment it was due, so that a probe
    held up behind others counts that wait too. Samples: (path, due, seconds, answered 200)."""

    def __init__(self, token: str):
        self.token = token
        self.samples: list[tuple[str, float, float, bool]] = []
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(PROBE_CLIENTS)
        self._local = threading.local()
        self._clients: list[common.Client] = []
        self._thread = threading.Thread(target=self._schedule, daemon=True)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        self._thread.join()
        # Interrupted: the web is stopped next, which ends the probes still waiting on it.
        self._pool.shutdown(wait=exc_type is None, cancel_futures=exc_type is not None)
        for client in self._clients:
            client.close()

    def _schedule(self) -> None:
        due = time.time()
        while not self._stop.is_set():
            for path in PROBE_PATHS:
                self._pool.submit(self._probe, path, due)
            due += PROBE_INTERVAL_S
            self._stop.wait(max(0.0, due - time.time()))

    def _probe(self, path: str, due: float) -> None:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = common.Client(token=self.token, timeout=CLIENT_TIMEOUT_S)
            self._clients.append(client)
        try:
            ok = client.request("GET", path)[0] == 200
        except (OSError, http.client.HTTPException):
            ok = False
        self.samples.append((path, due, time.time() - due, ok))


def part_2(procs: common.Processes, web: common.Proc, args) -> list[str]:
    from django.contrib.auth.hashers import get_hasher, make_password

    n = args.signups
    run = uuid.uuid4().hex[:6]
    hasher = get_hasher()
    began = time.process_time()
    make_password(PASSWORD)
    one_hash = time.process_time() - began
    print(
        f"\n-- (2) the default hasher: {hasher.algorithm}, {getattr(hasher, 'iterations', '?'):,} iterations, "
        f"{one_hash * 1000:.0f} ms CPU per hash here: {n} of them are {n * one_hash:.0f} CPU seconds"
    )
    probe_token = register_many([f"probe-{run}"])[0]
    answers: list[tuple[int | None, float, str]] = [(None, float("nan"), "not sent")] * n

    def sign_up(i: int, release: Release) -> None:
        client = common.Client(timeout=CLIENT_TIMEOUT_S)
        release.arrive(i, client)
        began = time.perf_counter()
        try:
            status, data, _ = client.request(
                "POST", REGISTER_PATH, body={"username": f"signup-{run}-{i}", "password": PASSWORD}
            )
        except (OSError, http.client.HTTPException) as exc:
            status, data = None, f"{type(exc).__name__}: {exc}"
        answers[i] = (status, time.perf_counter() - began, str(data)[:200])
        client.close()

    with (
        common.phase(f"(2) {n} sign-ups at once, probes every {PROBE_INTERVAL_S * 1000:.0f} ms"),
        Prober(probe_token) as prober,
    ):
        time.sleep(PROBE_WARMUP_S + BASELINE_S)
        release = Release(n, web)
        release.run(sign_up)
        ended = time.time()
        print(f"   connections per web process: {', '.join(map(str, release.spread()))}")
        running_check(procs)
    return report_2(answers, prober.samples, release, ended)


def report_2(answers, samples, release: Release, ended: float) -> list[str]:
    n, released = len(answers), release.released
    baseline = min(due for _, due, _, _ in samples) + PROBE_WARMUP_S
    created = sorted(s for status, s, _ in answers if status == 201)
    in_time = sum(1 for s in created if s <= SIGNUP_LIMIT_S)
    unanswered = sum(1 for status, _, _ in answers if status is None)
    refused = [(status, text) for status, _, text in answers if status not in (None, 201)]
    print(f"\n== (2) {n} sign-ups at once ({ended - released:.1f} s from the barrier to the last answer)")
    common.print_table(
        ["sign-ups", "n", "p50 s", "p99 s", "max s"],
        [
            ["answered 201", len(created), *_ps(created, (50, 99))],
            [f"  of which within {SIGNUP_LIMIT_S:g} s", in_time, "", "", ""],
            [f"no answer within {CLIENT_TIMEOUT_S} s", unanswered, "", "", ""],
            ["answered otherwise", len(refused), "", "", ""],
        ],
    )
    print(f"\nanswered within {SIGNUP_LIMIT_S:g} s: {in_time} of {n}  target: all  {common.verdict(in_time == n)}")
    print("\n== (2) the sign-ups by the web process that accepted their connection (each hashes one at a time)")
    by_process: dict[int | None, list[float]] = {}
    for pid, (status, seconds, _) in zip(release.process_of, answers, strict=True):
        by_process.setdefault(pid, []).append(seconds if status == 201 else float("inf"))
    common.print_table(
        ["web process", "sign-ups", "first answer s", "last answer s", "within 30 s"],
        [
            [_process(pid), len(times), min(times), max(times), sum(1 for t in times if t <= SIGNUP_LIMIT_S)]
            for pid, times in sorted(by_process.items(), key=lambda item: -len(item[1]))
        ],
    )
    print("\n== (2) the other requests, probed every 100 ms, timed from when each was due")
    rows = []
    for path in PROBE_PATHS:
        for label, inside in (
            ("before", lambda due: baseline <= due < released),
            ("during", lambda due: released <= due <= ended),
        ):
            mine = [(s * 1000, ok) for p, due, s, ok in samples if p == path and inside(due)]
            failed = sum(1 for _, ok in mine if not ok)
            rows.append([path, label, len(mine), failed, *_ps([ms for ms, _ in mine], (50, 99))])
    common.print_table(["probe", "burst", "n", "failed", "p50 ms", "p99 ms", "max ms"], rows)
    problems = [f"a sign-up answered {status}: {text}" for status, text in refused[:10]]
    failed_probes = sum(1 for _, _, _, ok in samples if not ok)
    if failed_probes:
        problems.append(f"{failed_probes} probes did not answer 200")
    return problems


def main() -> None:
    args = parse_args()
    print(f"bench_event: {common.machine_note()}")
    problems: list[str] = []
    with common.fresh_database(DB_NAME, keep=args.keep_db, REGISTER_RATE="off") as env:
        from django.core.management import call_command

        from attempts.models import Question

        call_command("load_questions", verbosity=0)
        question = Question.objects.get(slug=QUESTION_SLUG)
        with common.Processes(env) as procs:
            with common.phase(f"start {', '.join(('web', *WORKER_LINES, 'relay'))} (the Procfile's lines)"):
                web = procs.web()
                for line in WORKER_LINES:
                    procs.worker(line=line)
                procs.relay()
                print(f"   {' '.join(common.procfile_command('web')[1:])}")
            if "1" in args.parts:
                problems += part_1(procs, web, args, question)
            if "2" in args.parts:
                problems += part_2(procs, web, args)
    print(f"\nbench_event done: {common.machine_note()}")
    if problems:
        raise common.BenchFailure(f"{len(problems)} problems, the first: {problems[0]}")


if __name__ == "__main__":
    common.run_main(main)
