"""The evaluation pipeline: throughput against a bare Celery task, latency, worker memory.

(a) Evaluations per second with the instant evaluator against a no-op Celery task, on the same
    broker, queue and worker flags (the Procfile's `worker` line) in the same run. Each side
    fills the queue while no worker runs, then a fresh worker drains it; the rate is taken
    between the first and the last completion as the worker itself stamped them (jobs'
    `finished_at`, the no-op's Redis stamps), so worker start-up is left out of both.
    Real jobs are written in bulk (submission, attempt moved to queued, job, outbox row, as a
    submit leaves them) and published by the relay's own `outbox_publish`. Target: >= 0.4.
(b) Submit-to-result latency on an idle system: web, worker and relay running, one submit at a
    time through the API, polling `GET /api/v1/attempts/{id}/?min_version=` until the result
    of that submission shows. Targets: p50 <= 150 ms, p99 <= 500 ms.
(c) Worker memory (RSS, and PSS, which counts pages shared by prefork children once) of the
    worker's main process and children across a long drain of instant jobs: growth after the
    warm-up (the first 10 %) under 10 %.

    .venv/bin/python benchmarks/bench_pipeline.py [--jobs 2000] [--submits 200] [--memory-jobs 10000]
                                                  [--only a,b,c] [--rounds 5]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379, whose databases 14 and 15 it flushes.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from celery import shared_task  # noqa: E402

from benchmarks import common  # noqa: E402

DB_NAME = "ip_bench_pipeline"
THIS_MODULE = "benchmarks.bench_pipeline"
NOOP_TASK = "benchmarks.bench_pipeline.noop"
QUEUE = "evaluate"
TARGET_RATIO = 0.4
TARGET_P50_MS = 150.0
TARGET_P99_MS = 500.0
TARGET_GROWTH = 0.10
ANSWER = "score=87 a benchmark answer"
QUESTION: dict | None = None  # None: the instant evaluator; --coding swaps in CODING_QUESTION

# --coding: the code runner in its sandbox, a 20-test question, as candidates' code runs.
CODING_TARGET_PER_SECOND = 40.0
CODING_QUESTION = {
    "title": "Benchmark: running totals",
    "kind": "coding",
    "difficulty": "easy",
    "prompt": "Return the running totals of a list of integers.",
    "evaluator": "code",
    "evaluation_spec": {
        "function": "running_totals",
        "tests": [{"name": f"case_{n}", "args": [list(range(-n, n * 3, 3))], "expected": None} for n in range(20)],
    },
}
for _test in CODING_QUESTION["evaluation_spec"]["tests"]:
    _values, _sum, _totals = _test["args"][0], 0, []
    for _v in _values:
        _sum += _v
        _totals.append(_sum)
    _test["expected"] = _totals
CODING_ANSWER = """
def running_totals(values):
    totals, running = [], 0
    for value in values:
        running += value
        totals.append(running)
    return totals
"""

_redis = None


def _counter_client():
    global _redis
    if _redis is None:
        import redis

        _redis = redis.Redis(host=common.REDIS_HOST, port=common.REDIS_PORT, db=common.CACHE_DB)
    return _redis


@shared_task(name=NOOP_TASK, ignore_result=True)
def noop(run: str) -> None:
    """The bare baseline: one Redis round trip to count and stamp its completion."""
    now = time.time()
    pipe = _counter_client().pipeline(transaction=False)
    pipe.incr(f"bench:noop:{run}:count")
    pipe.set(f"bench:noop:{run}:first", now, nx=True)
    pipe.set(f"bench:noop:{run}:last", now)
    pipe.execute()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="(a) jobs per side per round")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="(a) rounds of no-op then real; the verdict takes the median ratio (one round on this "
        "shared machine ranged 0.31-0.49)",
    )
    parser.add_argument("--submits", type=int, default=200, help="(b) measured submits")
    parser.add_argument("--memory-jobs", type=int, default=10_000, help="(c) jobs drained")
    parser.add_argument("--only", default="a,b,c", help="which parts to run, e.g. a,c")
    parser.add_argument(
        "--coding",
        action="store_true",
        help="evaluate a 20-test coding question in the sandbox instead of the instant evaluator "
        f"(target {CODING_TARGET_PER_SECOND:.0f} evaluations/s; (a) and (b) only)",
    )
    parser.add_argument("--keep-db", action="store_true", help=f"leave the {DB_NAME} database for inspection")
    args = parser.parse_args()
    args.parts = {p.strip() for p in args.only.split(",") if p.strip()}
    if args.coding:
        global QUESTION, ANSWER
        QUESTION, ANSWER = CODING_QUESTION, CODING_ANSWER
        args.parts.discard("c")
    if not args.parts <= {"a", "b", "c"}:
        parser.error("--only takes a comma-separated subset of a,b,c")
    return args


# --- filling the queue ---------------------------------------------------------------------


def enqueue_jobs(n: int, *, chunk: int = 2000) -> list[int]:
    """`n` evaluate jobs on `n` fresh attempts (one each, so none supersedes another), left as a
    submit leaves them, then published by the relay's code. Returns the job ids."""
    from django.conf import settings
    from django.db import transaction
    from django.utils import timezone

    from attempts.models import Attempt, AttemptStatus, Submission
    from evaluation.jobs.outbox import TASK_NAME, outbox_publish
    from evaluation.models import EvaluationJob, JobStatus, Outbox

    job_ids: list[int] = []
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        seeded = common.seed(
            users=max(1, size // 50), attempts_per_user=50, prefix=f"p{uuid.uuid4().hex[:6]}", question=QUESTION
        )
        attempt_ids = [a for _, a in seeded.pairs][:size]
        with transaction.atomic():
            attempts = list(Attempt.objects.filter(pk__in=attempt_ids).order_by("pk"))
            submissions = Submission.objects.bulk_create(
                [Submission(attempt=a, answer=ANSWER, idempotency_key=f"bulk-{a.pk}") for a in attempts]
            )
            for attempt, submission in zip(attempts, submissions, strict=True):
                attempt.status = AttemptStatus.QUEUED
                attempt.version += 1
                attempt.latest_submission = submission
            Attempt.objects.bulk_update(attempts, ["status", "version", "latest_submission"], batch_size=1000)
            jobs = EvaluationJob.objects.bulk_create(
                [
                    EvaluationJob(
                        kind="evaluate",
                        subject_id=s.pk,
                        status=JobStatus.PENDING,
                        max_tries=settings.CONFIG.job_max_tries,
                        correlation_id=s.idempotency_key,
                    )
                    for s in submissions
                ]
            )
            now = timezone.now()
            Outbox.objects.bulk_create(
                [Outbox(job=j, queue="evaluate", task_name=TASK_NAME, available_at=now) for j in jobs]
            )
        job_ids.extend(j.pk for j in jobs)
    while outbox_publish(limit=500):
        pass
    return job_ids


def enqueue_noops(n: int, run: str) -> None:
    from interviewprep.celery import app

    with app.producer_or_acquire() as producer:
        for _ in range(n):
            app.send_task(NOOP_TASK, args=[run], queue=QUEUE, producer=producer)


def queue_depth() -> int:
    import redis

    return redis.Redis(host=common.REDIS_HOST, port=common.REDIS_PORT, db=common.STATE_DB).llen(QUEUE)


def diagnose_jobs(batch) -> str:
    """What a stalled drain looks like, for the failure message."""
    import redis
    from django.db.models import Count

    statuses = dict(batch.values_list("status").annotate(c=Count("id")).values_list("status", "c"))
    client = redis.Redis(host=common.REDIS_HOST, port=common.REDIS_PORT, db=common.STATE_DB)
    return (
        f"Jobs by status: {statuses}; broker queue {QUEUE!r} holds {client.llen(QUEUE)} messages, "
        f"{client.hlen('unacked')} unacknowledged. Jobs still queued with an empty broker queue mean "
        f"their messages were lost: did another process flush Redis db {common.STATE_DB}?"
    )


# --- (a) throughput --------------------------------------------------------------------------


def drain_noops(procs: common.Processes, n: int) -> dict:
    run = uuid.uuid4().hex[:10]
    enqueue_noops(n, run)
    depth = queue_depth()
    redis = _counter_client()
    worker = procs.worker(include=THIS_MODULE)
    began = time.monotonic()
    common.wait_progress(
        lambda: int(redis.get(f"bench:noop:{run}:count") or 0),
        n,
        proc=worker,
        what="no-op tasks done",
        interval=0.1,
        diagnose=lambda: f"broker queue {QUEUE!r} holds {queue_depth()} messages.",
    )
    wall = time.monotonic() - began
    first = float(redis.get(f"bench:noop:{run}:first"))
    last = float(redis.get(f"bench:noop:{run}:last"))
    procs.stop(worker)
    return {"n": n, "queued": depth, "span": last - first, "rate": (n - 1) / (last - first), "wall": wall}


def drain_jobs(procs: common.Processes, n: int) -> dict:
    from django.db.models import Count, Max, Min

    from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob

    began = time.monotonic()
    job_ids = enqueue_jobs(n)
    print(f"   {n} jobs written and published in {time.monotonic() - began:.1f} s", flush=True)
    depth = queue_depth()
    # The jobs are the only ones in the throwaway database, so a primary-key range selects them:
    # polling with thousands of ids in an IN list cost the measured side a tenth of the machine,
    # where the no-op side polls one Redis counter.
    batch = EvaluationJob.objects.filter(pk__gte=min(job_ids), pk__lte=max(job_ids))
    assert batch.count() == n, "the benchmark database holds other jobs in the measured id range"
    worker = procs.worker(include=THIS_MODULE)
    began = time.monotonic()
    common.wait_progress(
        lambda: batch.filter(status__in=FINAL_JOB_STATUSES).count(),
        n,
        proc=worker,
        what="evaluation jobs finished",
        diagnose=lambda: diagnose_jobs(batch),
    )
    wall = time.monotonic() - began
    procs.stop(worker)
    span = batch.aggregate(first=Min("finished_at"), last=Max("finished_at"))
    seconds = (span["last"] - span["first"]).total_seconds()
    outcomes = dict(batch.values_list("status").annotate(c=Count("id")).values_list("status", "c"))
    return {"n": n, "queued": depth, "span": seconds, "rate": (n - 1) / seconds, "wall": wall, "outcomes": outcomes}


def part_a(procs: common.Processes, args) -> None:
    rows = []
    ratios = []
    for round_no in range(args.rounds):
        with common.phase(f"(a) round {round_no + 1}/{args.rounds}: {args.jobs} no-op tasks, then {args.jobs} jobs"):
            bare = drain_noops(procs, args.jobs)
            print(f"   no-op: {bare['rate']:,.1f}/s ({bare['queued']} queued before the worker started)", flush=True)
            real = drain_jobs(procs, args.jobs)
            print(f"   jobs:  {real['rate']:,.1f}/s, outcomes {real['outcomes']}", flush=True)
        ratios.append(real["rate"] / bare["rate"])
        label = "coding evaluation" if args.coding else "instant evaluation"
        for name, side in (("no-op task", bare), (label, real)):
            rows.append([name, round_no + 1, side["n"], side["span"], side["rate"], side["n"] / side["wall"]])
        if real["outcomes"].get("succeeded", 0) != real["n"]:
            print(f"   warning: not every job succeeded: {real['outcomes']}")
    print("\n== (a) evaluations per second against a bare Celery task (same broker, queue, worker flags)")
    print(f"   worker: {' '.join(common.procfile_command('worker')[1:])} --include {THIS_MODULE}")
    common.print_table(["task", "round", "jobs", "first-to-last s", "per second", "per second incl. start"], rows)
    ratio = common.median(ratios)
    if args.coding:
        from attempts.models import Result

        wrong = Result.objects.exclude(score=100).count()
        if wrong:
            raise common.BenchFailure(f"{wrong} coding results scored below 100: the sandbox is not grading right")
        rate = common.median([row[4] for row in rows if row[0] == "coding evaluation"])
        print(
            f"\ncoding evaluations (20 tests each, sandboxed) = {rate:.1f}/s  "
            f"target >= {CODING_TARGET_PER_SECOND:.0f}/s  {common.verdict(rate >= CODING_TARGET_PER_SECOND)}"
            f"  ({ratio:.2f} of the no-op task)"
        )
        return
    print(
        f"\nevaluations / no-op = {ratio:.3f} (per round: {', '.join(f'{r:.2f}' for r in ratios)})  "
        f"target >= {TARGET_RATIO}  {common.verdict(ratio >= TARGET_RATIO)}"
    )


# --- (b) latency -----------------------------------------------------------------------------


def part_b(procs: common.Processes, args) -> None:
    from evaluation.models import EvaluationJob

    warmup = 10
    with common.phase(f"(b) {args.submits} submits one at a time (web + worker + relay running)"):
        seeded = common.seed(users=1, attempts_per_user=args.submits + warmup, prefix="lat", question=QUESTION)
        web = procs.web()
        worker = procs.worker()
        relay = procs.relay()
        token = seeded.pairs[0][0]
        submit_client = common.Client(token=token)
        poll_client = common.Client(token=token)
        end_to_end, submit_ms, polls = [], [], []
        submission_ids = []
        for n, (_, attempt) in enumerate(seeded.pairs):
            began = time.perf_counter()
            status, data, _ = submit_client.request(
                "POST",
                f"/api/v1/attempts/{attempt}/submissions/",
                body={"answer": ANSWER},
                headers={"Idempotency-Key": f"lat-{attempt}"},
            )
            accepted = time.perf_counter()
            if status != 202:
                raise common.BenchFailure(f"submit answered {status}: {data}")
            count = 0
            while True:
                count += 1
                status, view, _ = poll_client.request(
                    "GET", f"/api/v1/attempts/{attempt}/?min_version={data['version']}"
                )
                if status != 200:
                    raise common.BenchFailure(f"attempt read answered {status}: {view}")
                result = view.get("result")
                if result and result.get("submission_id") == data["submission_id"]:
                    break
                if time.perf_counter() - began > 30:
                    raise common.BenchFailure(f"no result for submission {data['submission_id']} in 30 s: {view}")
                time.sleep(0.005)
            done = time.perf_counter()
            if n >= warmup:
                end_to_end.append((done - began) * 1000)
                submit_ms.append((accepted - began) * 1000)
                polls.append(count)
                submission_ids.append(data["submission_id"])
            for proc in (web, worker, relay):
                if not proc.alive():
                    raise common.BenchFailure(f"{proc.name} died:\n{proc.tail()}")
        submit_client.close()
        poll_client.close()
        jobs = EvaluationJob.objects.filter(kind="evaluate", subject_id__in=submission_ids)
        pipeline = sorted((j.finished_at - j.created_at).total_seconds() * 1000 for j in jobs)
        queued = sorted((j.started_at - j.created_at).total_seconds() * 1000 for j in jobs)
        for proc in (relay, worker, web):
            procs.stop(proc)
    end_to_end.sort()
    submit_ms.sort()
    print(
        f"\n== (b) submit-to-result latency, {len(end_to_end)} submits one at a time ({warmup} warm-up ones left out)"
    )
    common.print_table(
        ["measure", "p50 ms", "p90 ms", "p99 ms", "max ms"],
        [
            [name, *(common.percentile(values, p) for p in (50, 90, 99)), values[-1]]
            for name, values in (
                ("submit request (202)", submit_ms),
                ("job created -> claimed", queued),
                ("job created -> finished", pipeline),
                ("submit -> result seen", end_to_end),
            )
        ],
    )
    p50, p99 = common.percentile(end_to_end, 50), common.percentile(end_to_end, 99)
    print(f"\n(polling every 5 ms; {common.median(polls):.0f} reads per submit at the median)")
    print(f"p50 = {p50:.0f} ms  target <= {TARGET_P50_MS:.0f}  {common.verdict(p50 <= TARGET_P50_MS)}")
    print(f"p99 = {p99:.0f} ms  target <= {TARGET_P99_MS:.0f}  {common.verdict(p99 <= TARGET_P99_MS)}")


# --- (c) memory ------------------------------------------------------------------------------


def tree_memory(pid: int) -> tuple[int, int, int]:
    pids = common.process_tree(pid)
    sizes = [common.memory_kib(p) for p in pids]
    return sum(r for r, _ in sizes), sum(p for _, p in sizes), len(pids)


def part_c(procs: common.Processes, args) -> None:
    from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob

    n = args.memory_jobs
    warm_at = max(1, n // 10)
    with common.phase(f"(c) worker memory across {n:,} instant jobs (warm-up: the first {warm_at:,})"):
        began = time.monotonic()
        job_ids = enqueue_jobs(n)
        print(f"   {n:,} jobs written and published in {time.monotonic() - began:.1f} s", flush=True)
        batch = EvaluationJob.objects.filter(pk__in=job_ids)
        worker = procs.worker()
        drain_began = time.monotonic()
        started = tree_memory(worker.pid)
        samples = []
        marks = [warm_at, *range(warm_at * 2, n, max(1, n // 5)), n]
        for mark in marks:
            common.wait_progress(
                lambda: batch.filter(status__in=FINAL_JOB_STATUSES).count(),
                mark,
                proc=worker,
                what="evaluation jobs finished",
                diagnose=lambda: diagnose_jobs(batch),
            )
            rss, pss, count = tree_memory(worker.pid)
            samples.append([f"{mark:,} jobs done", count, rss / 1024, pss / 1024])
            print(f"   {samples[-1][0]}: RSS {rss / 1024:.1f} MiB, PSS {pss / 1024:.1f} MiB", flush=True)
        drained = time.monotonic() - drain_began
        procs.stop(worker)
    print(f"\n== (c) worker memory (main + prefork children), {n:,} instant jobs")
    common.print_table(
        ["when", "processes", "RSS MiB", "PSS MiB"],
        [["ready, before any job", started[2], started[0] / 1024, started[1] / 1024], *samples],
    )
    warm_rss, end_rss = samples[0][2], samples[-1][2]
    warm_pss, end_pss = samples[0][3], samples[-1][3]
    growth = end_rss / warm_rss - 1
    print(
        f"\nRSS at warm-up {warm_rss:.1f} MiB, at the end {end_rss:.1f} MiB: growth {growth:+.1%}  "
        f"target < {TARGET_GROWTH:.0%}  {common.verdict(growth < TARGET_GROWTH)}"
    )
    print(
        f"(PSS {warm_pss:.1f} -> {end_pss:.1f} MiB: {end_pss / warm_pss - 1:+.1%}; "
        f"drained at {n / drained:,.1f} jobs/s including worker start)"
    )


def main() -> None:
    args = parse_args()
    print(f"bench_pipeline: {common.machine_note()}")
    env = common.bench_env(DB_NAME)
    common.recreate_database(DB_NAME)
    common.flush_redis()
    try:
        with common.phase("migrate"):
            common.setup_django(env)
        with common.Processes(env) as procs:
            if "a" in args.parts:
                part_a(procs, args)
            if "b" in args.parts:
                part_b(procs, args)
            if "c" in args.parts:
                part_c(procs, args)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)


if __name__ == "__main__":
    common.run_main(main)
