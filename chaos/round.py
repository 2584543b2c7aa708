"""One round: fresh database and Redis servers, every Procfile process, candidates, the fault
schedule, settling, and the checks."""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from chaos.checks import Context, check_round, settle
from chaos.client import Client, Counters
from chaos.faults import Injector
from chaos.known import known_issue
from chaos.processes import Fleet, Proc
from chaos.schedule import TRY_ENDING_FAULTS, Plan
from chaos.services import ChaosSetupError, Postgres
from chaos.setup import STAFF_PASSWORD, STAFF_USERNAME, process_env
from chaos.workload import Question, Workload
from interviewprep.processes import RedisServer, free_port


@dataclass(frozen=True)
class Options:
    web_workers: int | None
    settle_timeout: float
    tolerate: frozenset[str] = frozenset()  # ids of known product bugs (known.py) counted apart
    ready_timeout: float = 180.0
    max_actions: int = 20


@dataclass
class Report:
    seed: int
    faults: collections.Counter = field(default_factory=collections.Counter)
    violations: list[str] = field(default_factory=list)
    tolerated: list[tuple[str, str]] = field(default_factory=list)  # (known issue id, violation)
    notes: list[str] = field(default_factory=list)
    exits: int = 0  # processes that died without being killed by the drill
    seconds: float = 0.0
    logdir: Path | None = None
    database: str | None = None


def run_round(
    plan: Plan, *, pg: Postgres, template: str, questions: list[Question], options: Options, say: Callable[[str], None]
) -> Report:
    started = time.monotonic()
    report = Report(plan.seed)
    db = f"ip_chaos_{os.getpid()}_{plan.seed}"
    logdir = Path(tempfile.mkdtemp(prefix=f"ip-chaos-{plan.seed}-"))
    servers: list[RedisServer] = []
    fleet: Fleet | None = None
    finished = False
    try:
        pg.create(db, template=template)
        cache = RedisServer("cache", parent_death=True)
        servers.append(cache)
        broker = RedisServer("broker", parent_death=True)
        servers.append(broker)
        port = free_port()
        env = process_env(
            database_url=pg.url(db), redis_url=cache.url(0), broker_url=broker.url(0), metrics_dir=logdir / "metrics"
        )
        (logdir / "metrics").mkdir()
        fleet = Fleet(
            env=env, logdir=logdir, port=port, evaluator_faults=plan.evaluator_faults, web_workers=options.web_workers
        )
        step = time.monotonic()
        fleet.start_all()
        sandbox = str(fleet.wait_ready(options.ready_timeout).get("sandbox", "unknown"))
        ready_in = time.monotonic() - step
        if sandbox == "refused":
            # Without its sandbox the code runner refuses every coding answer for good, by design.
            questions = [q for q in questions if q.evaluator != "code"]
        started_with = ", ".join(
            f"{p.name}#{p.number}: {p.evaluator_faults}" for p in fleet.procs if p.evaluator_faults
        )
        say(
            f"  {', '.join(fleet.names)} ready in {ready_in:.1f} s on port {port};"
            f" sandbox {sandbox}; EVALUATOR_FAULTS: {started_with or 'none'}"
        )

        staff = Client(port, Counters()).send(
            "POST", "/api/v1/auth/token/", {"username": STAFF_USERNAME, "password": STAFF_PASSWORD}
        )
        if staff.status != 200:
            raise ChaosSetupError(f"the staff token call answered {staff.status} {staff.body[:300]!r}")
        workload = Workload(
            port=port,
            seed=plan.seed,
            questions=questions,
            rngs=[plan.candidate_rng(i) for i in range(plan.candidates)],
            duration=plan.duration,
            max_actions=options.max_actions,
        )
        injector = Injector(fleet=fleet, cache=cache, broker=broker, pg=pg, db=db)
        workload.prepare()
        fired = _drive(plan, workload, injector, fleet, report, say)
        settled, waited = settle(
            port,
            timeout=options.settle_timeout,
            tick=lambda: _supervise(fleet, report, say),
            stalled=lambda: _unstick(fleet, broker, report, say),
        )
        say(f"  settled in {waited:.1f} s" if settled else f"  NOT settled after {waited:.0f} s")
        crash_starts = any("crash_before_commit" in p.evaluator_faults for p in fleet.procs)
        ctx = Context(
            env=env,
            port=port,
            staff_token=staff.json()["token"],
            workload=workload,
            failures_possible=crash_starts or bool(fired & TRY_ENDING_FAULTS),
            redis_paused="redis-pause" in fired,
        )
        violations, notes, checked = check_round(ctx, settled)
        # Stalled consumers were reported while settling; every finding is classified here.
        violations, report.violations = report.violations + violations, []
        for violation in violations:
            issue = known_issue(violation, fired, options.tolerate)
            if issue is None:
                report.violations.append(violation)
            else:
                report.tolerated.append((issue.id, violation))
        report.notes += notes
        sent = collections.Counter(s.kind for s in workload.sent)
        say(
            f"  workload: {len(workload.users)} candidates, {sent['submit']} submits, {sent['practice']} practice "
            f"requests, {sent['create']} attempts opened; {workload.counters.requests} requests, "
            f"{workload.counters.resent} sent again after a 5xx or a broken connection"
        )
        say(f"  checked: {checked}")
        finished = True
    finally:
        if fleet is not None:
            fleet.stop_all()
        for server in servers:
            server.stop()
        report.seconds = time.monotonic() - started
        if report.violations or not finished:
            report.logdir, report.database = logdir, db
            if not finished:
                say(f"  round {plan.seed} stopped early; process logs kept in {logdir}")
        else:
            pg.drop(db)
            if report.exits:
                report.logdir = logdir  # why a process died is worth reading, even in a clean round
            else:
                shutil.rmtree(logdir, ignore_errors=True)
    return report


def _drive(plan: Plan, workload: Workload, injector: Injector, fleet: Fleet, report: Report, say) -> set[str]:
    """The clock of the round: candidates run while the main thread fires each fault at its time
    (and its recovery later). Processes are started only from this thread."""
    order = itertools.count()
    events: list[tuple[float, int, object]] = [(f.at, next(order), f) for f in plan.faults]
    heapq.heapify(events)
    fired: set[str] = set()
    workload.start()
    t0 = time.monotonic()
    while events or not workload.done():
        now = time.monotonic() - t0
        while events and events[0][0] <= now:
            _, _, event = heapq.heappop(events)
            if callable(event):
                say(f"  +{now:6.2f} s  {event()}")
                continue
            text, later = injector.fire(event)
            say(f"  +{now:6.2f} s  {event.kind}: {text}")
            if not text.startswith("skipped"):
                fired.add(event.kind)
                report.faults[event.kind] += 1
            for follow in later:
                heapq.heappush(events, (now + follow.delay, next(order), follow.action))
        _supervise(fleet, report, say)
        wait = events[0][0] - (time.monotonic() - t0) if events else 0.2
        # The schedule's own clock: waiting for the next fault's time is its purpose.
        time.sleep(min(max(wait, 0.0), 0.2))
    workload.join()
    return fired


def _unstick(fleet: Fleet, broker: RedisServer, report: Report, say) -> None:
    """Nothing moves while jobs wait: find the workers whose queues hold messages they do not
    take, report each as a violation (with the stacks Celery prints on SIGUSR1 in its log), and
    replace it, as a supervisor with a liveness probe would, so the round's other checks still run."""
    client = redis.Redis(port=broker.port, socket_timeout=2)
    try:
        waiting = {q: client.llen(q) for proc in fleet.live(workers=True) for q in fleet.queues(proc.name)}
    except redis.RedisError as exc:
        report.violations.append(f"stalled, and the broker does not answer: {exc}")
        return
    finally:
        client.close()
    for proc in fleet.live(workers=True):
        queues = {q: waiting[q] for q in fleet.queues(proc.name) if waiting[q]}
        if not queues:
            continue
        _dump_stacks(proc)
        evidence = next((line for line in proc.tail(200_000).splitlines() if "Couldn't ack" in line), "")
        violation = (
            f"{proc.name}#{proc.number} stopped consuming: {queues} messages wait in its queues;"
            f" its log: {evidence[:220] or 'nothing'}"
        )
        report.violations.append(violation)
        say(f"  {violation}")
        fleet.kill(proc)
        say(f"  replaced by {fleet.start(proc.name).name} (logs of the stalled one: {proc.log})")


def _dump_stacks(proc: Proc) -> None:
    """Celery prints every thread's stack on SIGUSR1: wait (bounded) until its log has them."""
    marker = "LOCAL VARIABLES"
    before = proc.tail(10**7).count(marker)
    proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 5
    while proc.tail(10**7).count(marker) == before and time.monotonic() < deadline:
        time.sleep(0.1)


def _supervise(fleet: Fleet, report: Report, say) -> None:
    for note in fleet.supervise():
        report.exits += 1
        report.notes.append(note)
        say(f"  {note}")


def keep_or_drop(report: Report, pg: Postgres, keep: bool) -> None:
    """A failing round's logs are kept; its database too when asked, else dropped."""
    if report.database and not keep:
        with contextlib.suppress(Exception):
            pg.drop(report.database)
        report.database = None
