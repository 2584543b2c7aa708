"""The staff dashboard's selector over a busy site's rows: 200,000 finished jobs over two days
(about 4,200 in the last hour), one try each (a tenth transient errors, some lock contended),
1,000 queued jobs and two hours of samples. Prints the time of one `ops_dashboard()` (each live
refresh of the page pays it once) and the plans of its series queries, which must use the time
indexes. Runs in its own database; never asserts a time.

    python benchmarks/bench_dashboard.py [--jobs 200000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import fresh_database, machine_note, phase, run_main  # noqa: E402

SEED = """
INSERT INTO evaluation_evaluationjob (kind, subject_id, status, tries, max_tries, last_error, discard_reason,
  correlation_id, request_id, share_key, created_at, updated_at, finished_at)
SELECT 'evaluate', g, 'succeeded', 1, 3, '', '', '', '', '',
  now() - g * %(spacing)s - interval '2 seconds', now(), now() - g * %(spacing)s
FROM generate_series(1, %(jobs)s) g;
INSERT INTO evaluation_evaluationjob (kind, subject_id, status, tries, max_tries, last_error, discard_reason,
  correlation_id, request_id, share_key, created_at, updated_at)
SELECT 'evaluate', g, 'queued', 0, 3, '', '', '', '', '', now() - g * interval '1 second', now()
FROM generate_series(1, 1000) g;
INSERT INTO evaluation_jobtry (job_id, number, lease_token, worker, request_id, started_at, finished_at, outcome, error)
SELECT id, 1, gen_random_uuid(), 'bench:1', '', finished_at - interval '1 second', finished_at,
  CASE WHEN id %% 10 = 0 THEN 'transient_error' WHEN id %% 17 = 0 THEN 'lock_contended' ELSE 'succeeded' END, ''
FROM evaluation_evaluationjob WHERE finished_at IS NOT NULL;
INSERT INTO evaluation_opssample (taken_at, counters, queue_depths, oldest_waiting)
SELECT now() - g * interval '30 seconds', jsonb_build_object('cache_hit', 100000 - g * 90, 'cache_miss', 1000 - g),
  '{"evaluate": 3}', '{"evaluate": 1.0}'
FROM generate_series(1, 240) g;
ANALYZE;
"""

PLANS = {
    "throughput": "SELECT count(*) FROM evaluation_evaluationjob WHERE finished_at >= now() - interval '1 hour'",
    "retries": (
        "SELECT count(*) FROM evaluation_jobtry WHERE finished_at >= now() - interval '1 hour' "
        "AND outcome = 'transient_error'"
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with fresh_database("bench_dashboard"):
        from datetime import timedelta

        from django.db import connection

        from evaluation.dashboard import ops_dashboard

        with phase(f"seed {args.jobs} jobs over two days"), connection.cursor() as cursor:
            cursor.execute(SEED, {"jobs": args.jobs, "spacing": timedelta(days=2) / args.jobs})
        ops_dashboard()  # warm: connections, the breaker's script
        times = []
        for _ in range(args.rounds):
            began = time.perf_counter()
            dashboard = ops_dashboard()
            times.append((time.perf_counter() - began) * 1000)
        finished = sum(value for _, value in dashboard.throughput)
        print(f"\n{machine_note()}")
        print(f"jobs finished in the hour: {finished:.0f}; retries: {sum(v for _, v in dashboard.retries):.0f}")
        median = statistics.median(times)
        print(f"ops_dashboard(): median {median:.1f} ms, max {max(times):.1f} ms ({args.rounds} rounds)")
        with connection.cursor() as cursor:
            for name, sql in PLANS.items():
                cursor.execute("EXPLAIN " + sql)
                print(f"plan of {name}: " + " / ".join(row[0].strip() for row in cursor.fetchall()))


if __name__ == "__main__":
    run_main(main)
