"""Fair share: one user's flood against another candidate's submit-to-result latency.

One candidate submits a correct answer to a 20-test Python question one at a time (polling
`?min_version=` until its result shows), first on an idle system, then while a flooder sends 100
submits and 100 runs from 16 clients at once (throttles raised, so only the relay's share limit
stands between the flood and the queues). The candidate starts once the flood has a backlog of
jobs waiting, and the backlog is counted before each of its submits, so the table shows that the
two overlapped. The flood phase runs twice, side by side: with the relay's default
JOBS_IN_FLIGHT_PER_USER and with 0 (no limit: the queues are plain FIFO).
Target: the candidate's p99 during the flood within 2x of its idle p99, with fair share.

    .venv/bin/python benchmarks/bench_fairshare.py [--submits 30] [--flood 100]

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, whose databases 14 and 15 it
flushes; the Procfile's web, worker, worker-run and relay lines.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submits", type=int, default=30, help="the candidate's measured submits per phase")
    parser.add_argument("--flood", type=int, default=100, help="the flooder's submits, and as many runs")
    return parser.parse_args()


def answer(n: int) -> str:
    # A comment of its own per submit, so no two answers are the same text.
    return f"{CODING_ANSWER}\n# {n} {uuid.uuid4().hex}\n"


def candidate_latencies(
    running: list[common.Proc], token: str, attempts: list[int], before_each=lambda: None
) -> list[float]:
    """Submit to result seen, in ms, one submit at a time, each on an attempt of its own."""
    client = common.Client(token=token)
    latencies = []
    try:
        for attempt in attempts:
            before_each()
            began = time.perf_counter()
            status, data, _ = client.request(
                "POST",
                f"/api/v1/attempts/{attempt}/submissions/",
                body={"answer": answer(attempt)},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            if status != 202:
                raise common.BenchFailure(f"the candidate's submit answered {status}: {data}")
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
            latencies.append((time.perf_counter() - began) * 1000)
    finally:
        client.close()
    return latencies


def flood(token: str, attempts: list[int]) -> float:
    """A submit and a run on each attempt, all at once from FLOOD_THREADS clients; the seconds it took."""
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
    refused = [s for s in statuses if s not in (200, 202)]
    if refused:
        raise common.BenchFailure(f"{len(refused)} of the flood's requests were refused: {sorted(set(refused))}")
    return time.perf_counter() - began


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


def phase(procs, running, name: str, candidate, flooder, args) -> dict[str, float]:
    (candidate_token, candidate_attempts), (flooder_token, flooder_attempts) = candidate, flooder
    backlog: list[int] = []
    with common.phase(name):
        took: list[float] = []
        sender = None
        if flooder_attempts:
            sender = threading.Thread(target=lambda: took.append(flood(flooder_token, flooder_attempts)), daemon=True)
            sender.start()
            # The candidate starts into a backlog, not into an empty system.
            common.wait_until(
                lambda: flood_waiting(flooder_attempts) >= BACKLOG or not sender.is_alive(),
                timeout=120,
                what=f"a backlog of {BACKLOG} flood jobs",
            )
        began = time.perf_counter()
        sample = (lambda: backlog.append(flood_waiting(flooder_attempts))) if flooder_attempts else (lambda: None)
        latencies = sorted(candidate_latencies(running, candidate_token, candidate_attempts, sample))
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
        "flood_s": took[0] if took else None,
        "measured_s": measured_for,
        "drained_s": drained_at,
        "backlog": statistics.median(backlog) if backlog else None,
        "under_flood": sum(1 for waiting in backlog if waiting > 0),
    }


def seeded_pairs(count: int, prefix: str) -> tuple[str, list[int]]:
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
        # Warm every process (first compile of the harness, first sandbox) before measuring.
        candidate_latencies(running + [relay], *seeded_pairs(5, "warm"))
        no_flood = ("", [])
        results["idle"] = phase(procs, running + [relay], "idle", seeded_pairs(args.submits, "idle"), no_flood, args)
        results[f"flood, fair share ({share} in flight)"] = phase(
            procs,
            running + [relay],
            "flood with fair share",
            seeded_pairs(args.submits, "fair"),
            seeded_pairs(args.flood, "flooda"),
            args,
        )
        procs.stop(relay)
        relay = procs.start("relay", common.procfile_command("relay"), JOBS_IN_FLIGHT_PER_USER="0")
        results["flood, no share limit (FIFO)"] = phase(
            procs,
            running + [relay],
            "flood without a share limit",
            seeded_pairs(args.submits, "fifo"),
            seeded_pairs(args.flood, "floodb"),
            args,
        )
    idle_p99 = results["idle"]["p99"]
    print(f"\n== the candidate's submit -> result, {args.submits} submits one at a time per phase")
    common.print_table(
        [
            "phase",
            "p50 ms",
            "p99 ms",
            "max ms",
            "p99 / idle p99",
            "flood sent in s",
            "flood drained after s",
            "flood backlog at a submit (median)",
            "submits into a backlog",
        ],
        [
            [
                name,
                r["p50"],
                r["p99"],
                r["max"],
                r["p99"] / idle_p99,
                r["flood_s"] or "",
                r["drained_s"] or "",
                "" if r["backlog"] is None else r["backlog"],
                "" if r["backlog"] is None else f"{r['under_flood']} of {args.submits}",
            ]
            for name, r in results.items()
        ],
    )
    fair = next(r for name, r in results.items() if name.startswith("flood, fair"))
    ratio = fair["p99"] / idle_p99
    print(f"\nwith fair share: p99 / idle p99 = {ratio:.2f}  target <= {TARGET}  {common.verdict(ratio <= TARGET)}")


if __name__ == "__main__":
    common.run_main(main)
