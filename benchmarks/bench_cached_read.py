"""Cached-read throughput: `GET /api/v1/attempts/{id}/` against a bare django-redis GET.

One gunicorn (the Procfile's `web` line) serves both views with the same middleware, token
authentication and renderer (`benchmarks/bench_urls.py`); rounds alternate between the two so
machine noise hits both alike, and the median of each is compared. Target: the attempt read
reaches at least 0.8 of the bare read. A throwaway database `ip_bench`, Redis databases 12 and 13
(BENCH_REDIS_DB and the next one, flushed: the other benchmarks flush 14/15, so the two can run
side by side) and port 18090 (BENCH_PORT) are used.

    .venv/bin/python benchmarks/bench_cached_read.py [--seconds 5] [--rounds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (  # noqa: E402
    REDIS_HOST,
    REDIS_PORT,
    BenchFailure,
    LoadResult,
    Processes,
    Target,
    bench_env,
    drop_database,
    load,
    machine_note,
    phase,
    print_table,
    recreate_database,
    run_main,
    seed,
    setup_django,
    verdict,
)

DB_NAME = "ip_bench"
PORT = int(os.environ.get("BENCH_PORT", "18090"))
REDIS_DB = int(os.environ.get("BENCH_REDIS_DB", "12"))
TARGET_RATIO = 0.8

CACHED = Target("GET", "/api/v1/attempts/{attempt}/")
BARE = Target("GET", "/bench/cache-get/{attempt}/")


def warm(pairs: list[tuple[str, int]]) -> None:
    """Both caches hold every attempt before the clock starts: the benchmark prices hits."""
    from django.core.cache import cache

    from attempts.cache import attempt_cached
    from attempts.selectors.payloads import attempt_payload_from_db
    from benchmarks.bench_urls import bare_key

    for _, attempt_id in pairs:
        payload = attempt_cached(attempt_id=attempt_id)
        if payload is None:
            raise BenchFailure(f"attempt {attempt_id} was not seeded")
        shown = {k: v for k, v in attempt_payload_from_db(attempt_id=attempt_id).items() if k != "user_id"}
        cache.set(bare_key(attempt_id), shown, timeout=None)


def flush_redis() -> None:
    import redis

    # config.py puts locks, counters and the broker on the database after the cache's.
    for db in (REDIS_DB, REDIS_DB + 1):
        try:
            redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_timeout=5).flushdb()
        except redis.RedisError as exc:
            raise BenchFailure(f"cannot flush Redis {REDIS_HOST}:{REDIS_PORT}/{db}: {exc}") from None


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
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each view, alternating")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--keep-db", action="store_true", help="leave the ip_bench database behind")
    args = parser.parse_args()

    env = bench_env(
        DB_NAME, "benchmarks.bench_settings", PORT=str(PORT), REDIS_URL=f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    )
    print(f"machine: {machine_note()}")
    with phase(f"fresh database {DB_NAME}, Redis flushed, migrate, seed"):
        recreate_database(DB_NAME)
        flush_redis()
        setup_django(env)
        pairs = seed(users=args.users, attempts_per_user=4, prefix="cached-read").pairs
        warm(pairs)
    try:
        with Processes(env) as procs:
            with phase(f"gunicorn (Procfile web) on port {PORT}"):
                procs.web(port=PORT)
            with phase("one short round of each, not counted: imports, connections, JIT-free warm-up"):
                for target in (BARE, CACHED):
                    load(target, pairs, seconds=1.0, connections=args.connections, port=PORT)
            before = cache_outcomes()
            results: dict[str, list[LoadResult]] = {"bare": [], "cached": []}
            for round_no in range(1, args.rounds + 1):
                for name, target in (("bare", BARE), ("cached", CACHED)):
                    with phase(f"round {round_no}: {name} ({args.seconds:g} s, {args.connections} connections)"):
                        result = load(target, pairs, seconds=args.seconds, connections=args.connections, port=PORT)
                        if result.unexpected:
                            raise BenchFailure(f"{result.unexpected} unexpected answers from the {name} view")
                        results[name].append(result)
                        print(f"   {result.rps:,.0f} requests/s ({result.tool})")
            after = cache_outcomes()
    finally:
        if not args.keep_db:
            drop_database(DB_NAME)

    rows = []
    for name in ("bare", "cached"):
        runs = results[name]
        rows.append(
            [
                "bare django-redis GET" if name == "bare" else "GET /api/v1/attempts/{id}/",
                statistics.median(r.rps for r in runs),
                min(r.rps for r in runs),
                max(r.rps for r in runs),
                statistics.median(r.latencies_ms["p50"] for r in runs),
                statistics.median(r.latencies_ms["p99"] for r in runs),
            ]
        )
    print()
    print_table(["view", "median req/s", "min", "max", "p50 ms", "p99 ms"], rows)
    ratio = rows[1][1] / rows[0][1]
    print(f"\nratio cached/bare: {ratio:.3f} (target >= {TARGET_RATIO}): {verdict(ratio >= TARGET_RATIO)}")
    delta = {k: after[k] - before[k] for k in after}
    served = sum(delta.values())
    hit_ratio = delta["hit"] / served if served else 0.0
    print(f"attempt cache during the rounds: {delta} (hit ratio {hit_ratio:.3f})")
    print(f"machine: {machine_note()}")


if __name__ == "__main__":
    run_main(main)
