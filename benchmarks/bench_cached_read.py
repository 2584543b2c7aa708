"""Cached-read throughput: `GET /api/v1/attempts/{id}/` against two django-redis GETs.

Two baselines run side by side with it, the rounds interleaved so machine noise hits all three
alike (`common.interleaved_rounds`):

- stack-cache:  one `cache.get` behind the app's own gunicorn, middleware, token authentication,
  permission check and renderer (`bench_urls.py`): what the attempt read's own work costs.
  Target: the attempt read reaches at least 0.8 of it.
- django-cache: one `cache.get` in a bare Django view, no DRF, no middleware, no authentication,
  sync gunicorn workers (`bare_urls.py`): what the whole web tier costs. Target: at least 0.5.

A throwaway database `ip_bench`, Redis databases 12 and 13 (BENCH_REDIS_DB and the next one,
flushed) and ports 18080 (the app, BENCH_PORT) and 18090 (the bare Django, BENCH_BARE_PORT).

    .venv/bin/python benchmarks/bench_cached_read.py [--seconds 5] [--rounds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import common  # noqa: E402
from benchmarks.common import Load, Ratio, Target  # noqa: E402

DB_NAME = "ip_bench"
REDIS_DB = int(os.environ.get("BENCH_REDIS_DB", "12"))

LOADS = [
    Load("stack-cache", "cache.get, app stack", Target("GET", "/bench/cache-get/{attempt}/")),
    Load("django-cache", "cache.get, bare Django", Target("GET", "/bare/cache-get/{attempt}/"), port=common.BARE_PORT),
    Load("cached", "GET /api/v1/attempts/{id}/", Target("GET", "/api/v1/attempts/{attempt}/")),
]
RATIOS = [Ratio("cached", "stack-cache", 0.8), Ratio("cached", "django-cache", 0.5)]


def warm(pairs: list[tuple[str, int]]) -> None:
    """Every cache holds every attempt before the clock starts: the benchmark prices hits."""
    from django.core.cache import cache

    from attempts.cache import attempt_cached
    from attempts.selectors.payloads import attempt_payload_from_db, attempt_shown
    from benchmarks.bare_urls import bare_key

    for _, attempt_id in pairs:
        payload = attempt_cached(attempt_id=attempt_id)
        if payload is None:
            raise common.BenchFailure(f"attempt {attempt_id} was not seeded")
        (shown,) = attempt_shown([attempt_payload_from_db(attempt_id=attempt_id)])
        cache.set(bare_key(attempt_id), shown, timeout=None)


def cache_outcomes() -> dict[str, float]:
    # gunicorn's counts, merged from the multiprocess folder it shares with this script.
    from prometheus_client import CollectorRegistry, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return {
        outcome: registry.get_sample_value("interviewprep_cache_requests_total", {"outcome": outcome}) or 0.0
        for outcome in ("hit", "miss", "stale", "error")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one load in one round")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per load before round 1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--keep-db", action="store_true", help="leave the ip_bench database behind")
    args = parser.parse_args()

    redis_url = f"redis://{common.REDIS_HOST}:{common.REDIS_PORT}/{REDIS_DB}"
    env = common.bench_env(DB_NAME, "benchmarks.bench_settings", REDIS_URL=redis_url)
    print(f"machine: {common.machine_note()}")
    with common.phase(f"fresh database {DB_NAME}, Redis flushed, migrate, seed"):
        common.recreate_database(DB_NAME)
        # config.py puts locks, counters and the broker on the database after the cache's.
        common.flush_redis((REDIS_DB, REDIS_DB + 1))
        common.setup_django(env)
        pairs = common.seed(users=args.users, attempts_per_user=4, prefix="cached-read").pairs
        warm(pairs)
    try:
        with common.Processes(env) as procs:
            with common.phase(f"gunicorn: Procfile web on {common.WEB_PORT}, bare Django on {common.BARE_PORT}"):
                servers = {common.WEB_PORT: procs.web(), common.BARE_PORT: procs.bare_django()}
            before = cache_outcomes()
            results = common.interleaved_rounds(
                LOADS,
                pairs,
                rounds=args.rounds,
                seconds=args.seconds,
                warmup=args.warmup,
                connections=args.connections,
                servers=servers,
                tool=args.tool,
            )
            after = cache_outcomes()
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)

    common.report_ratios(LOADS, results, RATIOS)
    unexpected = sum(r.unexpected for runs in results.values() for r in runs)
    if unexpected:
        raise common.BenchFailure(f"{unexpected} unexpected answers (see the table)")
    delta = {k: after[k] - before[k] for k in after}
    served = sum(delta.values())
    hit_ratio = delta["hit"] / served if served else 0.0
    print(f"attempt cache during the rounds: {delta} (hit ratio {hit_ratio:.3f})")
    print(f"machine: {common.machine_note()}")


if __name__ == "__main__":
    common.run_main(main)
