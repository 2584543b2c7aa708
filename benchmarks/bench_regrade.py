"""A regrade of many submissions beside a candidate's own submits.

One candidate submits a coding answer one at a time through the API and polls
`GET /api/v1/attempts/{id}/?min_version=` until its result shows, with and without a regrade of
--regrades scored submissions of the same question running (each one a sandboxed evaluation, as
the candidate's is). The processes are the Procfile's own `web`, `worker`, `worker-regrade` and
`relay` lines, so the regrade worker runs under its production scheduling policy and nice. The
regrade is started once; "without" is the same machine with the regrade worker frozen (SIGSTOP to its
process group, shorter than a job's lease), "with" the same worker running. The two alternate
in --rounds blocks, ABBA, so a shared machine's drifting load falls on both sides alike. It
prints the candidate's submit-to-result p50/p99 side by side, their ratio, and how many regrades
finished meanwhile (the regrade must outlast the submits, or "with" measured nothing). Nothing
asserts a time: the target the issue names is that the candidate's p99 with a regrade running
stays within its p99 without one.

    .venv/bin/python benchmarks/bench_regrade.py [--regrades 500] [--submits 60] [--rounds 4]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379 (BENCH_REDIS_PORT), whose databases 14 and 15 it flushes.
"""

from __future__ import annotations

import argparse
import signal
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
    parser.add_argument("--rounds", type=int, default=4, help="blocks per side, alternating")
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


class Candidate:
    """One candidate's submits, one at a time: ms from the submit's request to its result seen."""

    def __init__(self, token: str, attempt_id: int, running) -> None:
        self.attempt_id, self.running, self.n = attempt_id, running, 0
        self.submit_client, self.poll_client = common.Client(token=token), common.Client(token=token)

    def submits(self, count: int) -> list[float]:
        return [self.submit_one() for _ in range(count)]

    def submit_one(self) -> float:
        self.n += 1
        began = time.perf_counter()
        status, data, _ = self.submit_client.request(
            "POST",
            f"/api/v1/attempts/{self.attempt_id}/submissions/",
            body={"answer": answer(10_000 + self.n)},
            headers={"Idempotency-Key": f"regrade-bench-{self.n}"},
        )
        if status != 202:
            raise common.BenchFailure(f"submit answered {status}: {data}")
        while True:
            path = f"/api/v1/attempts/{self.attempt_id}/?min_version={data['version']}"
            status, view, _ = self.poll_client.request("GET", path)
            result = view.get("result") if status == 200 else None
            if result and result.get("submission_id") == data["submission_id"]:
                if result["score"] is None:
                    raise common.BenchFailure(f"the candidate's answer was not scored: {result}")
                return (time.perf_counter() - began) * 1000
            if status != 200:
                raise common.BenchFailure(f"attempt read answered {status}: {view}")
            for proc in self.running:
                if not proc.alive():
                    raise common.BenchFailure(f"{proc.name} exited:\n{proc.tail()}")
            if time.perf_counter() - began > 60:
                raise common.BenchFailure(f"no result for submission {data['submission_id']} in 60 s")
            time.sleep(0.005)

    def close(self) -> None:
        self.submit_client.close()
        self.poll_client.close()


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
                web, worker, regrader, relay = (
                    procs.web(),
                    procs.worker(),
                    procs.worker(line="worker-regrade"),
                    procs.relay(),
                )
            candidate = Candidate(token, attempt_id, [web, worker, regrader, relay])
            regrader.kill(signal.SIGSTOP)
            try:
                candidate.submits(WARMUP)
                question = Question.objects.get(pk=seeded.question_id)
                question.evaluation_spec = QUESTION["evaluation_spec"]
                question.save(update_fields=["evaluation_spec", "updated_at"])
                change = question_change_record(question=question, changed=["evaluation_spec"])
                staff = get_user_model().objects.create(username="regrade-staff", is_staff=True, is_superuser=True)
                with common.phase(f"start the regrade of {args.regrades} submissions (its worker frozen)"):
                    started = regrade_start(change_id=change.pk, user=staff)
                block = max(1, args.submits // args.rounds)
                sides: dict[str, list[float]] = {"without": [], "with": []}
                seconds, finished = 0.0, 0
                order = [side for r in range(args.rounds) for side in (("without", "with"), ("with", "without"))[r % 2]]
                with common.phase(f"{args.rounds} rounds of {block} submits per side, ABBA"):
                    for side in order:
                        if side == "with":
                            regrader.kill(signal.SIGCONT)
                            began, before = time.monotonic(), regrades_finished()
                        sides[side] += candidate.submits(block)
                        if side == "with":
                            seconds += time.monotonic() - began
                            finished += regrades_finished() - before
                            regrader.kill(signal.SIGSTOP)
            finally:
                regrader.kill(signal.SIGCONT)
                candidate.close()
            left = started.jobs - regrades_finished()
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)

    baseline, during = sorted(sides["without"]), sorted(sides["with"])
    print(f"\n== candidate's submit-to-result, {len(baseline)} submits per side ({WARMUP} warm-up ones left out)")
    common.print_table(
        ["side", "p50 ms", "p90 ms", "p99 ms", "max ms"],
        [
            [name, *(common.percentile(values, p) for p in (50, 90, 99)), values[-1]]
            for name, values in (
                ("regrade worker frozen", baseline),
                (f"regrade of {started.jobs} running", during),
            )
        ],
    )
    p50 = common.percentile(during, 50) / common.percentile(baseline, 50)
    p99 = common.percentile(during, 99) / common.percentile(baseline, 99)
    print(f"with / without: p50 x{p50:.2f}, p99 x{p99:.2f}")
    print(
        f"regrades finished while the candidate submitted: {finished} of {started.jobs} in {seconds:.1f} s "
        f"({finished / seconds:.1f}/s); {left} still to do"
        + ("" if left > 0 else "  WARNING: the regrade ended before the submits did")
    )


if __name__ == "__main__":
    common.run_main(main)
