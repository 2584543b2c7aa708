"""Waiting for a result: how soon a waiting client sees it, and what waiting clients cost.

(a) Commit to client. With web, worker and relay running (the Procfile's lines), one submit at
    a time through the API, each followed at once by
    `GET /api/v1/attempts/{id}/?min_version=<version + 2>&wait=30`, which answers when the
    result commits. Printed: p50/p99 from the result's commit (the job's `finished_at`,
    stamped by the worker in the result's transaction just before it commits: so a little
    more than the true figure) to the client's response, and the whole submit-to-result time.
    For comparison, a page polling every 2 s sees a result 1 s after its commit on average.
(b) 1,000 clients waiting at once (`?wait=30` on 1,000 attempts that do not change), held open
    from another process: `GET /api/v1/questions/` p99 while they wait against with nobody
    waiting, in interleaved rounds, as a ratio (target <= 1.5). A machine too busy to take all
    of them in before the first ones' 30 s would end measures with as many as wait by then, and
    says how many. Also the web processes' RSS
    and PSS idle and with the waits open, Redis clients (a wait holds one) and how long all
    1,000 took to answer once their attempts changed in one transaction.

    .venv/bin/python benchmarks/bench_wait.py [--submits 100] [--waiters 1000] [--rounds 2]
                                              [--seconds 5] [--connections 8] [--only a,b]

Uses `wrk` for the plain GETs when installed, else the Python load generator (its CPU use on a
small machine raises both p99s; the ratio less so). Needs PostgreSQL on 127.0.0.1:5432 (user
postgres; BENCH_PG_* to change) and Redis on 127.0.0.1:6379, whose databases 14 and 15 it
flushes; port 18080 (BENCH_PORT).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402
from benchmarks.common import Target  # noqa: E402

DB_NAME = "ip_bench_wait"
ANSWER = "score=77 a benchmark answer"
TARGET_P99_RATIO = 1.5
WAIT_SECONDS = 30
PLAIN = Target("GET", "/api/v1/questions/")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submits", type=int, default=100, help="(a) measured submits")
    parser.add_argument("--waiters", type=int, default=1000, help="(b) clients waiting at once")
    parser.add_argument("--rounds", type=int, default=2, help="(b) rounds of idle, then with the waits open")
    parser.add_argument("--seconds", type=float, default=5.0, help="(b) measured seconds of plain GETs per load")
    parser.add_argument("--connections", type=int, default=8, help="(b) connections sending plain GETs")
    parser.add_argument("--only", default="a,b")
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--keep-db", action="store_true", help=f"leave the {DB_NAME} database for inspection")
    args = parser.parse_args()
    args.parts = {p.strip() for p in args.only.split(",") if p.strip()}
    if not args.parts <= {"a", "b"}:
        parser.error("--only takes a comma-separated subset of a,b")
    # The measurement must fit inside one wait, with the waits' start and end around it.
    if args.seconds > WAIT_SECONDS / 3:
        parser.error(f"--seconds must be at most {WAIT_SECONDS / 3:g}: the waits must outlast the measurement")
    return args


# --- (a) commit to client ----------------------------------------------------------------------


def part_a(procs: common.Processes, args) -> None:
    from evaluation.models import EvaluationJob

    warmup = 10
    with common.phase(f"(a) {args.submits} submits one at a time, each followed by a wait for its result"):
        seeded = common.seed(users=1, attempts_per_user=args.submits + warmup, prefix="wait")
        web, worker, relay = procs.web(), procs.worker(), procs.relay()
        token = seeded.pairs[0][0]
        submit_client, wait_client = common.Client(token=token), common.Client(token=token)
        seen_at: dict[int, float] = {}
        sent_at: dict[int, float] = {}
        whole_ms: list[float] = []
        for n, (_, attempt) in enumerate(seeded.pairs):
            began = time.time()
            status, data, _ = submit_client.request(
                "POST",
                f"/api/v1/attempts/{attempt}/submissions/",
                body={"answer": ANSWER},
                headers={"Idempotency-Key": f"wait-{attempt}"},
            )
            if status != 202:
                raise common.BenchFailure(f"submit answered {status}: {data}")
            asked = time.time()
            path = f"/api/v1/attempts/{attempt}/?min_version={data['version'] + 2}&wait={WAIT_SECONDS}"
            status, view, _ = wait_client.request("GET", path)
            answered = time.time()
            result = (view or {}).get("result") if status == 200 else None
            if not result or result.get("submission_id") != data["submission_id"]:
                raise common.BenchFailure(f"the wait answered {status} without the result: {view}")
            if n >= warmup:
                seen_at[data["submission_id"]] = answered
                sent_at[data["submission_id"]] = asked
                whole_ms.append((answered - began) * 1000)
            for proc in (web, worker, relay):
                if not proc.alive():
                    raise common.BenchFailure(f"{proc.name} died:\n{proc.tail()}")
        submit_client.close()
        wait_client.close()
        jobs = EvaluationJob.objects.filter(kind="evaluate", subject_id__in=list(seen_at))
        committed = {job.subject_id: job.finished_at.timestamp() for job in jobs}
        to_client = sorted((seen_at[s] - committed[s]) * 1000 for s in seen_at)
        already = sum(committed[s] <= sent_at[s] for s in seen_at)
        for proc in (worker, relay):
            procs.stop(proc)
        procs.stop(web)
    whole_ms.sort()
    print()
    common.print_table(
        ["measure", "n", "p50 ms", "p99 ms", "max ms"],
        [
            ["result commit -> waiting client", len(to_client), *_ps(to_client)],
            ["submit sent -> result seen", len(whole_ms), *_ps(whole_ms)],
        ],
    )
    print(f"  ({already} of {len(seen_at)} results had committed before their wait was sent)")


def _ps(values: list[float]) -> list[float]:
    return [common.percentile(values, 50), common.percentile(values, 99), values[-1] if values else float("nan")]


# --- (b) many waits open -----------------------------------------------------------------------


def _hold_waits(port: int, items: list[tuple[str, int, int]], conn) -> None:
    """In a process of its own: open one wait per (token, attempt, version), say when every
    request is sent, then report each answer as (status, version seen, time answered)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * len(items) + 64)), hard))

    async def one(token: str, attempt: int, version: int, sent: asyncio.Event, count: list[int]):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            (
                f"GET /api/v1/attempts/{attempt}/?min_version={version + 1}&wait={WAIT_SECONDS} HTTP/1.1\r\n"
                f"Host: 127.0.0.1\r\nAuthorization: Token {token}\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        count[0] += 1
        if count[0] == len(items):
            sent.set()
        raw = await reader.read()
        answered = time.time()
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        return status, (json.loads(body).get("version") if status == 200 else None), answered

    async def main() -> None:
        sent, count = asyncio.Event(), [0]
        tasks = [asyncio.create_task(one(*item, sent, count)) for item in items]
        await sent.wait()
        conn.send("sent")
        conn.send(await asyncio.gather(*tasks, return_exceptions=True))

    asyncio.run(main())


def _open_waits() -> int:
    """Waits begun and not ended, from the web's /metrics (every process, and earlier runs)."""
    status, text, _ = common.Client().request("GET", "/metrics")
    if status != 200:
        raise common.BenchFailure(f"/metrics answered {status}")
    total = 0.0
    for line in str(text).splitlines():
        if line.startswith("interviewprep_waits_started_total "):
            total += float(line.split()[-1])
        elif line.startswith("interviewprep_waits_ended_total{"):
            total -= float(line.split()[-1])
    return round(total)


def _wake(attempt_ids: list[int]) -> float:
    """Move every attempt on (draft or failed to queued, queued to failed) in one transaction;
    returns when it committed."""
    from django.db import transaction

    from attempts.models import Attempt, AttemptStatus
    from attempts.services.transitions import transition

    with transaction.atomic():
        for attempt in Attempt.objects.select_for_update().filter(pk__in=attempt_ids).order_by("pk"):
            to = AttemptStatus.FAILED if attempt.status == AttemptStatus.QUEUED else AttemptStatus.QUEUED
            transition(attempt, to, actor="bench:wake")
    return time.time()


def _web_memory(web: common.Proc) -> tuple[int, int]:
    """(RSS, PSS) in MiB over the arbiter and its workers."""
    sizes = [common.memory_kib(pid) for pid in common.process_tree(web.pid)]
    return sum(r for r, _ in sizes) // 1024, sum(p for _, p in sizes) // 1024


def _redis_clients() -> tuple[int, int]:
    """(connections on this benchmark's Redis databases, notify listeners among them): the server
    is shared, so its own total counts other users' clients too."""
    import redis

    clients = [
        c
        for c in redis.Redis(host=common.REDIS_HOST, port=common.REDIS_PORT).client_list()
        if int(c["db"]) in (common.CACHE_DB, common.STATE_DB)
    ]
    return len(clients), sum(c["name"].startswith("ip-notify-") for c in clients)


def part_b(procs: common.Processes, args, tool: str) -> None:
    from django.core.management import call_command

    from attempts.models import Attempt

    with common.phase(f"(b) plain GETs with nobody waiting, then with {args.waiters:,} waits open"):
        call_command("load_questions", verbosity=0)
        seeded = common.seed(users=args.waiters // 10, attempts_per_user=10, prefix="waiters")
        versions = dict(Attempt.objects.filter(pk__in=[a for _, a in seeded.pairs]).values_list("pk", "version"))
        web = procs.web()
        print(f"   {' '.join(common.procfile_command('web')[1:])}")
        common.load(PLAIN, seeded.pairs, seconds=2, connections=args.connections, tool=tool)  # warm-up
        idle_memory = _web_memory(web)
        idle_clients = _redis_clients()
        rows, ratios, wakes, held = [], [], [], []
        n = len(seeded.pairs)
        ctx = multiprocessing.get_context("spawn")
        for round_no in range(args.rounds):
            alone = common.load(PLAIN, seeded.pairs, seconds=args.seconds, connections=args.connections, tool=tool)
            # Fresh attempts each round would cost a seed per round; moving them on is as good:
            # each round waits for the version after the one they are at now.
            items = [(token, attempt, versions[attempt]) for token, attempt in seeded.pairs]
            already = _open_waits()
            parent, child = ctx.Pipe()
            holder = ctx.Process(target=_hold_waits, args=(common.WEB_PORT, items, child))
            holder.start()
            opened = time.time()
            if not parent.poll(60) or parent.recv() != "sent":
                raise common.BenchFailure("the waiting clients did not send their requests in 60 s")
            # All of them waiting, or, on a machine too busy to take them in, as many as are by
            # the time a measurement still fits inside the first ones' 30 s.
            settle_by = opened + WAIT_SECONDS - args.seconds - 8
            while (open_before := _open_waits() - already) < n and time.time() < settle_by:
                if not web.alive():
                    raise common.BenchFailure(f"web died:\n{web.tail()}")
                time.sleep(0.5)
            settled_s = time.time() - opened
            memory, clients = _web_memory(web), _redis_clients()
            crowded = common.load(PLAIN, seeded.pairs, seconds=args.seconds, connections=args.connections, tool=tool)
            open_after = _open_waits() - already
            woke_at = _wake([attempt for _, attempt in seeded.pairs])
            if not parent.poll(WAIT_SECONDS + 30):
                raise common.BenchFailure("the waits did not answer")
            answers = parent.recv()
            holder.join(10)
            versions = dict(Attempt.objects.filter(pk__in=list(versions)).values_list("pk", "version"))
            bad = [a for a in answers if isinstance(a, BaseException) or a[0] != 200]
            if bad:
                raise common.BenchFailure(f"{len(bad)} waits did not answer 200: {bad[:3]}")
            early = sum(a[2] < woke_at for a in answers)
            moved = sum(a[1] == versions[item[1]] for a, item in zip(answers, items, strict=True))
            last = max(a[2] for a in answers)
            wakes.append((last - woke_at) * 1000)
            held.append((memory, clients))
            ratio = crowded.latencies_ms["p99"] / alone.latencies_ms["p99"]
            ratios.append(ratio)
            for name, result in (("nobody waiting", alone), (f"{open_before:,}-{open_after:,} waiting", crowded)):
                rows.append(
                    [
                        round_no + 1,
                        name,
                        result.rps,
                        result.latencies_ms["p50"],
                        result.latencies_ms["p99"],
                        result.unexpected,
                    ]
                )
            print(
                f"   round {round_no + 1}: {open_before:,} of {n:,} waiting {settled_s:.1f} s after the requests "
                f"left, {open_after:,} after the measurement; p99 {alone.latencies_ms['p99']:.1f} ms alone, "
                f"{crowded.latencies_ms['p99']:.1f} ms with them ({ratio:.2f}); all {len(answers):,} answered 200, "
                f"{moved:,} with the change ({early:,} at their deadline before it), the last "
                f"{wakes[-1]:.0f} ms after the commit",
                flush=True,
            )
    print()
    common.print_table(["round", "plain GET /api/v1/questions/", "req/s", "p50 ms", "p99 ms", "unexpected"], rows)
    print()
    ratio = common.median(ratios)
    print(
        f"p99 with {args.waiters:,} waiting / p99 with nobody waiting = {ratio:.2f}  target <= {TARGET_P99_RATIO}  "
        f"{common.verdict(ratio <= TARGET_P99_RATIO)}  (per round: {', '.join(f'{r:.2f}' for r in ratios)}; "
        f"load generator: {tool})"
    )
    memory = max(h[0] for h in held)
    print(
        f"web processes (arbiter + workers): RSS {idle_memory[0]} MiB idle, {memory[0]} MiB with the waits open "
        f"(PSS {idle_memory[1]} -> {memory[1]} MiB: {(memory[0] - idle_memory[0]) * 1024 / args.waiters:.0f} KiB "
        f"RSS per wait)"
    )
    busy = max(h[1] for h in held)
    print(
        f"Redis connections on the benchmark's databases: {idle_clients[0]} idle, {busy[0]} with the waits open "
        f"({busy[1]} of them notify listeners); all waits answered {common.median(wakes):.0f} ms (median of "
        f"rounds) after one commit moved their attempts"
    )


def main() -> None:
    args = parse_args()
    tool = "wrk" if args.tool == "auto" and common.have_wrk() else ("python" if args.tool == "auto" else args.tool)
    print(f"bench_wait: {common.machine_note()}; load generator: {tool}")
    with common.fresh_database(DB_NAME, keep=args.keep_db) as env, common.Processes(env) as procs:
        if "a" in args.parts:
            part_a(procs, args)
        if "b" in args.parts:
            part_b(procs, args, tool)


if __name__ == "__main__":
    common.run_main(main)
