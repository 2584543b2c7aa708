"""Submit throughput against a bare Django view, side by side in one process tree.

One gunicorn, started with the Procfile's `web` flags, serves both the real submit endpoint and
`GET /bench/bare/<id>/` (one ORM get by primary key behind the same middleware, token
authentication and renderer, see submit_bench_urls.py). Rounds alternate three loads, each with
the same persistent connections over the same (user, attempt) pairs:

- bare:   GET /bench/bare/<id>/
- fresh:  POST /api/v1/attempts/<id>/submissions/ with a new Idempotency-Key every request
- replay: the same POST with the key and body of a submit already made (a stored answer)

and the script prints requests per second and the ratios to the bare view (targets: fresh at
least 0.5, replay at least 0.8). Throttling and the overload limit are switched off; no worker
runs, so submissions stay queued while the outbox fast path publishes their messages.

    .venv/bin/python benchmarks/bench_submit.py [--seconds 3] [--rounds 8] [--connections 16]

Uses `wrk` when installed (`apt-get install -y wrk`), else a slower Python load generator
whose own CPU use on a small machine lowers every number (the ratios less so).
Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379, whose databases 14 and 15 it flushes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402
from benchmarks.common import Target  # noqa: E402

DB_NAME = "ip_bench_submit"
TARGETS = {"fresh": 0.5, "replay": 0.8}
ANSWER_BODY = '{"answer": "score=90 an answer of a few words"}'
SUBMIT_PATH = "/api/v1/attempts/{attempt}/submissions/"
FIXED_PREFIX = "bench-replay"

LOADS = {
    "bare": Target("GET", "/bench/bare/{attempt}/", expect_status=200),
    "fresh": Target("POST", SUBMIT_PATH, body=ANSWER_BODY, key="fresh", expect_status=202),
    "replay": Target(
        "POST",
        SUBMIT_PATH,
        body=ANSWER_BODY,
        key="fixed",
        expect_status=202,
        expect_replayed=True,
        fixed_key_prefix=FIXED_PREFIX,
    ),
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Short slices, many rounds: on a shared machine the background load drifts within seconds,
    # and finely interleaved slices let all three loads see the same drift.
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per load per round")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds per load before round 1")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16, help="gunicorn has 2 workers x 8 threads")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--attempts-per-user", type=int, default=16)
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--keep-db", action="store_true", help=f"leave the {DB_NAME} database for inspection")
    return parser.parse_args()


def prime_replays(pairs: list[tuple[str, int]]) -> None:
    """Make the one submit each replayed key stands for, through the API, and check a replay."""
    clients: dict[str, common.Client] = {}
    for token, attempt in pairs:
        client = clients.setdefault(token, common.Client(token=token))
        status, data, _ = _post_raw(client, attempt)
        if status != 202:
            raise common.BenchFailure(f"priming submit on attempt {attempt} answered {status}: {data}")
    token, attempt = pairs[0]
    status, data, response = _post_raw(clients[token], attempt)
    if status != 202 or response.getheader("Idempotent-Replayed") != "true":
        raise common.BenchFailure(f"a replay answered {status} without Idempotent-Replayed: {data}")
    bare_status, bare, _ = clients[token].request("GET", f"/bench/bare/{attempt}/")
    if bare_status != 200:
        raise common.BenchFailure(f"the bare view answered {bare_status}: {bare}")
    for client in clients.values():
        client.close()


def _post_raw(client: common.Client, attempt: int):
    # The body must be byte for byte the one the load sends: the fingerprint covers it.
    return client.request(
        "POST",
        SUBMIT_PATH.format(attempt=attempt),
        body=ANSWER_BODY,
        headers={"Idempotency-Key": f"{FIXED_PREFIX}-{attempt}"},
    )


def main() -> None:
    args = parse_args()
    tool = "wrk" if args.tool == "auto" and common.have_wrk() else ("python" if args.tool == "auto" else args.tool)
    print(f"bench_submit: {common.machine_note()}; load generator: {tool}")
    if tool == "python":
        print("  note: wrk is missing (apt-get install -y wrk); the Python generator competes for the CPU")
    env = common.bench_env(DB_NAME, settings_module="benchmarks.submit_bench_settings")
    common.recreate_database(DB_NAME)
    common.flush_redis()
    try:
        with common.phase("migrate and seed"):
            common.setup_django(env)
            seeded = common.seed(users=args.users, attempts_per_user=args.attempts_per_user)
            print(f"   {args.users} users x {args.attempts_per_user} attempts = {len(seeded.pairs)} pairs")
        with common.Processes(env) as procs:
            with common.phase("start gunicorn (Procfile web line) and prime the replayed keys"):
                web = procs.web()
                print(f"   {' '.join(common.procfile_command('web')[1:])}")
                prime_replays(seeded.pairs)
            results = run_rounds(args, seeded.pairs, tool, web)
        report(args, results)
        check_database(results)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)


def run_rounds(args, pairs, tool, web) -> dict[str, list[common.LoadResult]]:
    results: dict[str, list[common.LoadResult]] = {name: [] for name in LOADS}
    with common.phase(f"warm-up: {args.warmup:.0f} s of each load"):
        for name, target in LOADS.items():
            warm = common.load(target, pairs, seconds=args.warmup, connections=args.connections, tool=tool)
            results.setdefault(f"_warm_{name}", []).append(warm)
    order = list(LOADS)
    for round_no in range(args.rounds):
        with common.phase(f"round {round_no + 1}/{args.rounds}: {args.seconds:.0f} s per load"):
            # Rotating the order spreads the drift of a shared machine over all three loads.
            for name in order[round_no % 3 :] + order[: round_no % 3]:
                result = common.load(LOADS[name], pairs, seconds=args.seconds, connections=args.connections, tool=tool)
                results[name].append(result)
                print(
                    f"   {name:<6} {result.rps:8.1f} req/s  p50 {result.latencies_ms['p50']:6.1f} ms  "
                    f"p99 {result.latencies_ms['p99']:6.1f} ms  unexpected {result.unexpected}",
                    flush=True,
                )
                if not web.alive():
                    raise common.BenchFailure(f"gunicorn died:\n{web.tail()}")
                time.sleep(0.5)
    return results


def report(args, results) -> None:
    print("\n== submit throughput against the bare view (same gunicorn, same middleware, same auth)")
    rows = []
    medians = {}
    for name in LOADS:
        runs = results[name]
        medians[name] = common.median([r.rps for r in runs])
        rows.append(
            [
                name,
                *[r.rps for r in runs],
                medians[name],
                common.median([r.latencies_ms["p50"] for r in runs]),
                common.median([r.latencies_ms["p99"] for r in runs]),
                sum(r.unexpected for r in runs),
            ]
        )
    common.print_table(
        [
            "load",
            *[f"round {i + 1} req/s" for i in range(args.rounds)],
            "median req/s",
            "p50 ms",
            "p99 ms",
            "unexpected",
        ],
        rows,
    )
    print()
    for name, target in TARGETS.items():
        per_round = [r.rps / b.rps for r, b in zip(results[name], results["bare"], strict=True) if b.rps]
        ratio = common.median(per_round)
        print(
            f"{name} / bare = {ratio:.3f} (median of per-round ratios; ratio of medians "
            f"{medians[name] / medians['bare']:.2f}; per round: {', '.join(f'{x:.2f}' for x in per_round)})  "
            f"target >= {target}  {common.verdict(ratio >= target)}"
        )
    bad = sum(r.unexpected for runs in results.values() for r in runs)
    if bad:
        print(f"\nwarning: {bad} responses had an unexpected status (see the 'unexpected' column)")


def check_database(results) -> None:
    """Every fresh request made exactly one submission; no replay made one."""
    from attempts.models import IdempotencyRecord, Submission
    from evaluation.models import Outbox

    fresh_ok = sum(r.requests - r.unexpected for key in ("fresh", "_warm_fresh") for r in results[key])
    submissions = Submission.objects.count()
    primed = IdempotencyRecord.objects.filter(key__startswith=FIXED_PREFIX).count()
    unpublished = Outbox.objects.filter(published_at__isnull=True).count()
    print(
        f"\ndatabase: {submissions:,} submissions for {fresh_ok:,} accepted fresh requests + {primed} primed keys "
        f"(wrk counts only completed requests, so a few in flight at the end may add to the first); "
        f"{unpublished} outbox rows left unpublished by the fast path"
    )


if __name__ == "__main__":
    common.run_main(main)
