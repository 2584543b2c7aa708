"""A regrade of many submissions beside a candidate's own submits.

One candidate submits a coding answer one at a time through the API and polls
`GET /api/v1/attempts/{id}/?min_version=` until its result shows, first with nothing else
running (the baseline), then while a regrade of --regrades scored submissions of the same
question runs (each one a sandboxed evaluation, as the candidate's is). Both sides run in the
same run on the Procfile's own `web`, `worker`, `worker-regrade` and `relay` lines, so the
regrade worker is as niced and as narrow as it is in production. It prints the candidate's
submit-to-result p50/p99 side by side and their ratio, and how many regrades finished during
the measured submits (the regrade must still be running when they end, or the side "during" was
not measured during anything). Nothing asserts a time: the target the issue names is that the
candidate's p99 during a regrade stays within its p99 without one.

    .venv/bin/python benchmarks/bench_regrade.py [--regrades 500] [--submits 60]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379 (BENCH_REDIS_PORT), whose databases 14 and 15 it flushes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402

DB_NAME = "ip_bench_regrade"
WARMUP = 5
SIGNATURE = {
    "function": "add",
    "params": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}],
    "returns": "int",
    "summary": "Return the sum of a and b.",
}
TESTS = [{"name": f"case_{n}", "args": [n, n * 7], "expected": n * 8, "visible": n < 2} for n in range(10)]
QUESTION = {
    "title": "Benchmark: add two numbers",
    "kind": "coding",
    "difficulty": "easy",
    "prompt": "Return the sum of a and b.",
    "evaluator": "code",
    "evaluation_spec": {"signature": SIGNATURE, "tests": TESTS},
}
# What the regraded answers were scored against: one expected value wrong, so each regrade moves
# a score (9/10 -> 10/10) through the whole fenced write, cache copy and notification.
OLD_TESTS = [*TESTS[:-1], {**TESTS[-1], "expected": -1}]


def answer(n: int) -> str:
    # Distinct text per submission, as candidates' answers are.
    return f"def add(a, b):\n    # answer {n}\n    return a + b\n"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regrades", type=int, default=500)
    parser.add_argument("--submits", type=int, default=60, help="measured submits per side")
    parser.add_argument("--keep-db", action="store_true")
    return parser.parse_args()


def seed_scored(question_id: int, n: int) -> None:
    """`n` candidates' attempts, each completed with a scored latest submission, in bulk."""
    from django.contrib.auth import get_user_model

    from attempts.models import Attempt, AttemptStatus, Result, Submission, SubmissionStatus

    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"regraded-{i}", password="!") for i in range(n)]
    )
    attempts = Attempt.objects.bulk_create(
        [Attempt(user=u, question_id=question_id, status=AttemptStatus.COMPLETED, version=3) for u in users]
    )
    submissions = Submission.objects.bulk_create(
        [Submission(attempt=a, answer=answer(i), status=SubmissionStatus.COMPLETED) for i, a in enumerate(attempts)]
    )
    Result.objects.bulk_create([Result(submission=s, score=90, max_score=100, feedback="old") for s in submissions])
    for attempt, submission in zip(attempts, submissions, strict=True):
        attempt.latest_submission = submission
        attempt.scored_submission = submission
    Attempt.objects.bulk_update(attempts, ["latest_submission", "scored_submission"])


def submit_loop(token: str, attempt_id: int, count: int, running, offset: int) -> list[float]:
    """`count` measured submits (after WARMUP unmeasured ones), one at a time: ms from the
    submit's request to its result seen."""
    submit_client, poll_client = common.Client(token=token), common.Client(token=token)
    times = []
    for n in range(WARMUP + count):
        began = time.perf_counter()
        status, data, _ = submit_client.request(
            "POST",
            f"/api/v1/attempts/{attempt_id}/submissions/",
            body={"answer": answer(10_000 + offset + n)},
            headers={"Idempotency-Key": f"regrade-bench-{offset + n}"},
        )
        if status != 202:
            raise common.BenchFailure(f"submit answered {status}: {data}")
        while True:
            path = f"/api/v1/attempts/{attempt_id}/?min_version={data['version']}"
            status, view, _ = poll_client.request("GET", path)
            result = view.get("result") if status == 200 else None
            if result and result.get("submission_id") == data["submission_id"]:
                if result["score"] is None:
                    raise common.BenchFailure(f"the candidate's answer was not scored: {result}")
                break
            if status != 200:
                raise common.BenchFailure(f"attempt read answered {status}: {view}")
            for proc in running:
                if not proc.alive():
                    raise common.BenchFailure(f"{proc.name} exited:\n{proc.tail()}")
            if time.perf_counter() - began > 60:
                raise common.BenchFailure(f"no result for submission {data['submission_id']} in 60 s")
            time.sleep(0.005)
        if n >= WARMUP:
            times.append((time.perf_counter() - began) * 1000)
    submit_client.close()
    poll_client.close()
    return sorted(times)


def regrades_finished() -> int:
    from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob

    return EvaluationJob.objects.filter(kind="regrade", status__in=FINAL_JOB_STATUSES).count()


def main() -> None:
    args = parse_args()
    print(f"bench_regrade: {common.machine_note()}")
    env = common.bench_env(DB_NAME)
    common.recreate_database(DB_NAME)
    common.flush_redis()
    try:
        with common.phase("migrate"):
            common.setup_django(env)
        from django.contrib.auth import get_user_model

        from attempts.models import Question
        from attempts.services.regrades import question_change_record, regrade_start

        old = {**QUESTION, "evaluation_spec": {"signature": SIGNATURE, "tests": OLD_TESTS}}
        with common.phase(f"seed {args.regrades} scored submissions and one candidate"):
            seeded = common.seed(users=1, attempts_per_user=1, prefix="regrade", question=old)
            seed_scored(seeded.question_id, args.regrades)
            token, attempt_id = seeded.pairs[0]
        with common.Processes(env) as procs:
            with common.phase("start web, worker, worker-regrade and relay (the Procfile's lines)"):
                running = [procs.web(), procs.worker(), procs.worker(line="worker-regrade"), procs.relay()]
            with common.phase(f"baseline: {args.submits} submits, no regrade"):
                baseline = submit_loop(token, attempt_id, args.submits, running, 0)
            question = Question.objects.get(pk=seeded.question_id)
            question.evaluation_spec = QUESTION["evaluation_spec"]
            question.save(update_fields=["evaluation_spec", "updated_at"])
            change = question_change_record(question=question, changed=["evaluation_spec"])
            staff = get_user_model().objects.create(username="regrade-staff", is_staff=True, is_superuser=True)
            with common.phase(f"start the regrade of {args.regrades} submissions"):
                started = regrade_start(change_id=change.pk, user=staff)
            began, before = time.monotonic(), regrades_finished()
            with common.phase(f"during the regrade: {args.submits} submits"):
                during = submit_loop(token, attempt_id, args.submits, running, 100_000)
            seconds, after = time.monotonic() - began, regrades_finished()
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)

    print(f"\n== candidate's submit-to-result, {args.submits} submits per side ({WARMUP} warm-up ones left out)")
    common.print_table(
        ["side", "p50 ms", "p90 ms", "p99 ms", "max ms"],
        [
            [name, *(common.percentile(values, p) for p in (50, 90, 99)), values[-1]]
            for name, values in (("no regrade", baseline), (f"during a regrade of {started.jobs}", during))
        ],
    )
    p50 = common.percentile(during, 50) / common.percentile(baseline, 50)
    p99 = common.percentile(during, 99) / common.percentile(baseline, 99)
    print(f"during / without: p50 x{p50:.2f}, p99 x{p99:.2f}")
    print(
        f"regrades finished while the candidate submitted: {after - before} of {started.jobs} "
        f"in {seconds:.1f} s ({(after - before) / seconds:.1f}/s)"
        + ("" if after < started.jobs else "  WARNING: the regrade ended before the submits did")
    )


if __name__ == "__main__":
    common.run_main(main)
