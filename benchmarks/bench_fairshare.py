"""Fair share: one user's flood against other candidates' submit-to-result latency.

Candidates submit a correct answer to a 20-test Python question one at a time, each candidate
once (polling `?min_version=` until its result shows), first on an idle system, then while a
flooder sends 100 submits and 100 runs from 16 clients at once. The candidates start once the
flood has a backlog of jobs waiting, and the backlog is counted before each submit, so the
table shows that the two overlapped. The flood runs three times:

- throttles off, so that only the relay's share limit (JOBS_IN_FLIGHT_PER_USER, its default)
  stands between the flood and the queues;
- throttles off and no share limit (0): plain FIFO queues, for comparison;
- the production defaults: the per-user throttles (SUBMIT_RATE, RUN_RATE) answer most of the
  flood 429, and the share limit holds what they let through.

A flood phase's figures count only the submits its backlog met (the flood's jobs not finished
when the submit was sent); a second table shows where each submit's time went, from the rows the
processes stamped. Target: the candidates' p99 during the flood within 2x of the idle p99, with
fair share.

    .venv/bin/python benchmarks/bench_fairshare.py [--idle 100] [--submits 60] [--flood 200]

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, whose databases 14 and 15 it
flushes; the Procfile's web, worker, worker-run and relay lines.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402
from benchmarks.bench_pipeline import CODING_ANSWER, CODING_QUESTION  # noqa: E402

DB_NAME = "ip_bench_fairshare"
TARGET = 2.0  # the flood's p99 over the idle p99
FLOOD_THREADS = 16
BACKLOG = 20  # flood jobs waiting before the candidate's first submit
# Raised so that the flood reaches the queues: the relay's share limit is what is measured.
UNTHROTTLED = {"SUBMIT_RATE": "off", "RUN_RATE": "off"}
# The web's environment for the last phase: the throttles as a deployment has them by default.
PRODUCTION_THROTTLES = {"SUBMIT_RATE": "30/min", "RUN_RATE": "60/min"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle", type=int, default=100, help="the candidates' submits on the idle system")
    parser.add_argument("--submits", type=int, default=60, help="the candidates' submits per flood phase")
    parser.add_argument("--flood", type=int, default=200, help="the flooder's submits, and as many runs")
    return parser.parse_args()


def answer(n: int) -> str:
    # A comment of its own per submit, so no two answers are the same text.
    return f"{CODING_ANSWER}\n# {n} {uuid.uuid4().hex}\n"


def candidate_latencies(
    running: list[common.Proc], pairs: list[tuple[str, int]], before_each=lambda: None
) -> list[Submitted]:
    """Submit to result seen, one submit at a time, each by a candidate of its own (so that no
    candidate meets its own throttle)."""
    submitted = []
    for token, attempt in pairs:
        client = common.Client(token=token)
        try:
            before_each()
            sent_at = time.time()
            began = time.perf_counter()
            status, data, _ = client.request(
                "POST",
                f"/api/v1/attempts/{attempt}/submissions/",
                body={"answer": answer(attempt)},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            if status != 202:
                raise common.BenchFailure(f"the candidate's submit answered {status}: {data}")
            answered = time.perf_counter()
            while True:
                status, view, _ = client.request("GET", f"/api/v1/attempts/{attempt}/?min_version={data['version']}")
                result = view.get("result") if status == 200 else None
                if result and result.get("submission_id") == data["submission_id"]:
                    if result.get("score") != result.get("max_score"):
                        raise common.BenchFailure(f"the candidate's answer scored {result}")
                    break
                for proc in running:
                    if not proc.alive():
                        raise common.BenchFailure(f"{proc.name} exited:\n{proc.tail()}")
                if time.perf_counter() - began > 60:
                    raise common.BenchFailure(f"no result for submission {data['submission_id']} in 60 s")
                time.sleep(0.005)
            seen = time.perf_counter()
            submitted.append(
                Submitted(
                    data["submission_id"],
                    sent_at,
                    (answered - began) * 1000,
                    (seen - began) * 1000,
                    sent_at + (seen - began),
                )
            )
        finally:
            client.close()
    return submitted


@dataclass(frozen=True)
class Submitted:
    submission_id: int
    sent_at: float  # epoch seconds, as the processes' own timestamps are
    answered_ms: float  # the submit's 202
    seen_ms: float  # its result read back: the candidate's submit -> result
    seen_at: float


# Where a submit's time goes, from the rows the processes stamped (one clock: one machine).
STEPS = ("submit answered", "in the outbox", "in the broker", "evaluated", "result seen")


def steps_of(submitted: list[Submitted]) -> dict[str, list[float]]:
    """Per step, each submit's milliseconds: the 202; from the job's row to its message's publish
    (the relay, and the share limit's hold); to its try's start (the broker, a free child); to
    the try's end; to the result read back (commit, notification, the poll)."""
    from evaluation.models import EvaluationJob, JobTry, Outbox

    jobs = dict(
        EvaluationJob.objects.filter(kind="evaluate", subject_id__in=[s.submission_id for s in submitted]).values_list(
            "subject_id", "pk"
        )
    )
    published = dict(
        Outbox.objects.filter(job_id__in=jobs.values()).order_by("job_id", "id").values_list("job_id", "published_at")
    )
    tries = {
        job_id: (started, finished)
        for job_id, started, finished in JobTry.objects.filter(job_id__in=jobs.values())
        .order_by("job_id", "number")
        .values_list("job_id", "started_at", "finished_at")
    }
    steps: dict[str, list[float]] = {name: [] for name in STEPS}
    for s in submitted:
        job_id = jobs[s.submission_id]
        started, finished = tries[job_id]
        marks = [s.sent_at, published[job_id].timestamp(), started.timestamp(), finished.timestamp(), s.seen_at]
        steps["submit answered"].append(s.answered_ms)
        steps["in the outbox"].append((marks[1] - s.sent_at) * 1000 - s.answered_ms)
        for name, (a, b) in zip(STEPS[2:], itertools.pairwise(marks[1:]), strict=True):
            steps[name].append((b - a) * 1000)
    return {name: sorted(values) for name, values in steps.items()}


def flood(token: str, attempts: list[int], throttled: bool) -> tuple[float, int]:
    """A submit and a run on each attempt, all at once from FLOOD_THREADS clients; the seconds it
    took, and how many its throttles refused (429; any other refusal fails the benchmark)."""
    local = threading.local()

    def send(item: tuple[str, int]) -> int:
        if not hasattr(local, "client"):
            local.client = common.Client(token=token)
        what, attempt = item
        path = f"/api/v1/attempts/{attempt}/{'submissions' if what == 'submit' else 'runs'}/"
        status, _, _ = local.client.request(
            "POST", path, body={"answer": answer(attempt)}, headers={"Idempotency-Key": uuid.uuid4().hex}
        )
        return status

    items = [(what, attempt) for attempt in attempts for what in ("submit", "run")]
    began = time.perf_counter()
    with ThreadPoolExecutor(FLOOD_THREADS) as pool:
        statuses = list(pool.map(send, items))
    throttled_away = statuses.count(429) if throttled else 0
    refused = [s for s in statuses if s not in (200, 202)]
    if len(refused) > throttled_away:
        raise common.BenchFailure(f"{len(refused)} of the flood's requests were refused: {sorted(set(refused))}")
    return time.perf_counter() - began, throttled_away


def flood_waiting(flooder_attempts: list[int]) -> int:
    """The flood's jobs not finished yet: its backlog."""
    from attempts.models import Run, Submission
    from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob

    subjects = Submission.objects.filter(attempt_id__in=flooder_attempts).values("pk")
    runs = Run.objects.filter(attempt_id__in=flooder_attempts).values("pk")
    waiting = EvaluationJob.objects.exclude(status__in=FINAL_JOB_STATUSES)
    return (
        waiting.filter(kind="evaluate", subject_id__in=subjects).count()
        + waiting.filter(kind="run", subject_id__in=runs).count()
    )


def phase(running, name: str, candidates, flooder, *, throttled: bool = False) -> dict[str, float]:
    flooder_token, flooder_attempts = flooder
    backlog: list[int] = []
    with common.phase(name):
        took: list[tuple[float, int]] = []
        sender = None
        if flooder_attempts:
            sender = threading.Thread(
                target=lambda: took.append(flood(flooder_token, flooder_attempts, throttled)), daemon=True
            )
            sender.start()
            # The candidate starts into a backlog, not into an empty system.
            common.wait_until(
                lambda: flood_waiting(flooder_attempts) >= BACKLOG or not sender.is_alive(),
                timeout=120,
                what=f"a backlog of {BACKLOG} flood jobs",
            )
        began = time.perf_counter()
        sample = (lambda: backlog.append(flood_waiting(flooder_attempts))) if flooder_attempts else (lambda: None)
        submitted = candidate_latencies(running, candidates, sample)
        if flooder_attempts:
            # Only the submits the flood's backlog met measure the flood.
            submitted = [s for s, waiting in zip(submitted, backlog, strict=True) if waiting > 0]
            if not submitted:
                raise common.BenchFailure("the flood drained before any candidate submitted into it")
        latencies = sorted(s.seen_ms for s in submitted)
        measured_for = time.perf_counter() - began
        drained_at = None
        if sender is not None:
            sender.join(timeout=600)
            if not took:
                raise common.BenchFailure("the flood did not finish sending")
            common.wait_until(lambda: flood_waiting(flooder_attempts) == 0, timeout=600, what="the flood to drain")
            drained_at = time.perf_counter() - began
    return {
        "p50": common.percentile(latencies, 50),
        "p99": common.percentile(latencies, 99),
        "max": latencies[-1],
        "flood_s": took[0][0] if took else None,
        "throttled": took[0][1] if took else None,
        "measured_s": measured_for,
        "drained_s": drained_at,
        "backlog": statistics.median(backlog) if backlog else None,
        "measured": len(submitted),
        "sent": len(candidates),
        "steps": steps_of(submitted),
        "slowest": steps_of([max(submitted, key=lambda s: s.seen_ms)]),
    }


def warm(running: list[common.Proc], prefix: str) -> None:
    """Candidates from as many clients at once as the web has processes, a few submits each, so
    that every process has served (a process's first request imports and connects) and every
    worker child has run a sandbox before anything is measured."""
    clients = 8
    pairs = seeded_candidates(clients * 3, prefix)
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda i: candidate_latencies(running, pairs[i::clients]), range(clients)))


def seeded_candidates(count: int, prefix: str) -> list[tuple[str, int]]:
    """`count` candidates, an attempt each."""
    return common.seed(users=count, attempts_per_user=1, prefix=prefix, question=CODING_QUESTION).pairs


def seeded_flooder(count: int, prefix: str) -> tuple[str, list[int]]:
    """One user with `count` attempts."""
    seeded = common.seed(users=1, attempts_per_user=count, prefix=prefix, question=CODING_QUESTION)
    return seeded.pairs[0][0], [attempt for _, attempt in seeded.pairs]


def main() -> None:
    args = parse_args()
    print(common.machine_note())
    results: dict[str, dict[str, float]] = {}
    with common.fresh_database(DB_NAME, **UNTHROTTLED) as env, common.Processes(env) as procs:
        from django.conf import settings

        share = settings.CONFIG.jobs_in_flight_per_user
        with common.phase("start web, worker, worker-run and relay"):
            running = [procs.web(), procs.worker(), procs.worker(line="worker-run")]
            relay = procs.relay()
        warm(running + [relay], "warm")
        no_flood = ("", [])
        results["idle"] = phase(running + [relay], "idle", seeded_candidates(args.idle, "idle"), no_flood)
        fair = f"flood, throttles off, fair share ({share} in flight)"
        results[fair] = phase(
            running + [relay],
            fair,
            seeded_candidates(args.submits, "fair"),
            seeded_flooder(args.flood, "flooda"),
        )
        procs.stop(relay)
        relay = procs.start("relay", common.procfile_command("relay"), JOBS_IN_FLIGHT_PER_USER="0")
        fifo = "flood, throttles off, no share limit (FIFO)"
        results[fifo] = phase(
            running + [relay],
            fifo,
            seeded_candidates(args.submits, "fifo"),
            seeded_flooder(args.flood, "floodb"),
        )
        procs.stop(relay)
        procs.stop(running[0])
        with common.phase("restart web with the default throttles, relay with the default share limit"):
            running[0] = procs.web(**PRODUCTION_THROTTLES)
            relay = procs.relay()
            warm(running + [relay], "rewarm")
        defaults = f"flood, production defaults (throttled, {share} in flight)"
        results[defaults] = phase(
            running + [relay],
            defaults,
            seeded_candidates(args.submits, "prod"),
            seeded_flooder(args.flood, "floodc"),
            throttled=True,
        )
    idle_p99 = results["idle"]["p99"]
    print("\n== the candidates' submit -> result, one submit at a time (a flood phase counts those its backlog met)")
    common.print_table(
        [
            "phase",
            "p50 ms",
            "p99 ms",
            "max ms",
            "p99 / idle p99",
            "flood sent in s",
            "of it refused 429",
            "flood drained after s",
            "flood backlog at a submit (median)",
            "submits measured (into a backlog)",
        ],
        [
            [
                name,
                r["p50"],
                r["p99"],
                r["max"],
                r["p99"] / idle_p99,
                r["flood_s"] or "",
                "" if r["throttled"] is None else r["throttled"],
                r["drained_s"] or "",
                "" if r["backlog"] is None else r["backlog"],
                f"{r['measured']} of {r['sent']}",
            ]
            for name, r in results.items()
        ],
    )
    print("\n== where the candidate's time went, per step: p50 / p99 ms, and the slowest submit's")
    common.print_table(
        ["phase", *STEPS],
        [
            [
                name,
                *(
                    f"{common.percentile(r['steps'][step], 50):.0f} / {common.percentile(r['steps'][step], 99):.0f}"
                    f" ({r['slowest'][step][0]:.0f})"
                    for step in STEPS
                ),
            ]
            for name, r in results.items()
        ],
    )
    print("(the outbox step holds the relay's wait and the share limit's; the answered step is the 202)")
    for name in (fair, defaults):
        ratio = results[name]["p99"] / idle_p99
        print(f"{name}: p99 / idle p99 = {ratio:.2f}  target <= {TARGET}  {common.verdict(ratio <= TARGET)}")


if __name__ == "__main__":
    common.run_main(main)
