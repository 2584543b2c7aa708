"""Submit throughput against two baselines, side by side in one process tree.

One gunicorn, started with the Procfile's `web` flags, serves the real submit endpoint and the
same-stack baseline `GET /bench/orm-read/<id>/` (one ORM get by primary key behind the same
middleware, token authentication and renderer, see bench_urls.py); a bare Django beside it
(no DRF, no middleware, no authentication, sync workers, see bare_urls.py) serves one ORM read
and one ORM write. Rounds interleave these loads, each with the same persistent connections
over the same (user, attempt) pairs (`common.interleaved_rounds`):

- stack-read:   GET /bench/orm-read/<id>/ on the app's stack
- django-read:  GET /bare/orm-read/<id>/, one ORM get, bare Django
- django-write: POST /bare/orm-write/<id>/, one ORM insert (one commit), bare Django
- fresh:        POST /api/v1/attempts/<id>/submissions/ with a new Idempotency-Key every request
- replay:       the same POST with the key and body of a submit already made (a stored answer)
- replay-1key:  that replay of one and the same key by every connection at once

and the script prints requests per second and the ratios with their targets: to the same-stack
read (what the submit's own work costs: fresh >= 0.5, replays >= 0.8) and to the bare Django
views (what the whole web tier costs: fresh >= 0.25 of the write, replays >= 0.5 of the read).
Throttling and the overload limit are switched off; no worker runs, so submissions stay queued
while the relay, running beside the web as in production, publishes their messages.

    .venv/bin/python benchmarks/bench_submit.py [--seconds 3] [--rounds 8] [--connections 16]

Uses `wrk` when installed (`apt-get install -y wrk`), else a slower Python load generator
whose own CPU use on a small machine lowers every number (the ratios less so).
Needs PostgreSQL on 127.0.0.1:5432 (user postgres; BENCH_PG_* to change) and Redis on
127.0.0.1:6379, whose databases 14 and 15 it flushes; ports 18080 (BENCH_PORT) and 18090
(BENCH_BARE_PORT).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common  # noqa: E402
from benchmarks.common import Load, Ratio, Target  # noqa: E402

DB_NAME = "ip_bench_submit"
ANSWER_BODY = '{"answer": "score=90 an answer of a few words"}'
SUBMIT_PATH = "/api/v1/attempts/{attempt}/submissions/"
FIXED_PREFIX = "bench-replay"
REPLAY = Target(
    "POST",
    SUBMIT_PATH,
    body=ANSWER_BODY,
    key="fixed",
    expect_status=202,
    expect_replayed=True,
    fixed_key_prefix=FIXED_PREFIX,
)
BARE = common.BARE_PORT


def loads(pairs: list[tuple[str, int]]) -> list[Load]:
    return [
        Load("stack-read", "ORM get, app stack", Target("GET", "/bench/orm-read/{attempt}/")),
        Load("django-read", "ORM get, bare Django", Target("GET", "/bare/orm-read/{attempt}/"), port=BARE),
        Load(
            "django-write",
            "ORM insert, bare Django",
            Target("POST", "/bare/orm-write/{attempt}/", body=ANSWER_BODY, expect_status=201),
            port=BARE,
        ),
        Load(
            "fresh", "submit, fresh key", Target("POST", SUBMIT_PATH, body=ANSWER_BODY, key="fresh", expect_status=202)
        ),
        Load("replay", "submit, finished key", REPLAY),
        Load("replay-1key", "one finished key, all at once", REPLAY, pairs=tuple(pairs[:1])),
    ]


RATIOS = [
    Ratio("fresh", "stack-read", 0.5),
    Ratio("replay", "stack-read", 0.8),
    Ratio("replay-1key", "stack-read", 0.8),
    Ratio("fresh", "django-write", 0.25),
    Ratio("replay", "django-read", 0.5),
    Ratio("replay-1key", "django-read", 0.5),
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Short slices, many rounds: on a shared machine the background load drifts within seconds,
    # and finely interleaved slices let every load see the same drift.
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per load per round")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds per load before round 1")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
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
    read_status, read, _ = clients[token].request("GET", f"/bench/orm-read/{attempt}/")
    if read_status != 200:
        raise common.BenchFailure(f"the same-stack read answered {read_status}: {read}")
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
    env = common.bench_env(DB_NAME, settings_module="benchmarks.bench_settings")
    common.recreate_database(DB_NAME)
    common.flush_redis()
    try:
        with common.phase("migrate and seed"):
            common.setup_django(env)
            seeded = common.seed(users=args.users, attempts_per_user=args.attempts_per_user)
            print(f"   {args.users} users x {args.attempts_per_user} attempts = {len(seeded.pairs)} pairs")
        with common.Processes(env) as procs:
            with common.phase("start gunicorn (Procfile web line, and the bare Django), the relay; prime the replays"):
                servers = {common.WEB_PORT: procs.web(), common.BARE_PORT: procs.bare_django()}
                procs.relay()
                print(f"   {' '.join(common.procfile_command('web')[1:])}")
                print(f"   {' '.join(common.bare_django_command()[1:])}")
                prime_replays(seeded.pairs)
            the_loads = loads(seeded.pairs)
            results = common.interleaved_rounds(
                the_loads,
                seeded.pairs,
                rounds=args.rounds,
                seconds=args.seconds,
                warmup=args.warmup,
                connections=args.connections,
                servers=servers,
                tool=tool,
            )
        print("\n== submits against the same-stack read and the bare Django views")
        common.report_ratios(the_loads, results, RATIOS)
        bad = sum(r.unexpected for runs in results.values() for r in runs)
        if bad:
            print(f"\nwarning: {bad} responses had an unexpected status (see the 'unexpected' column)")
        check_database()
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            common.drop_database(DB_NAME)


def check_database() -> None:
    """Every accepted submit made exactly one submission, under its own key; no replay made one."""
    from attempts.models import IdempotencyRecord, Submission
    from evaluation.models import Outbox

    submissions = Submission.objects.count()
    keys = IdempotencyRecord.objects.count()
    primed = IdempotencyRecord.objects.filter(key__startswith=FIXED_PREFIX).count()
    unpublished = Outbox.objects.filter(published_at__isnull=True).count()
    print(
        f"\ndatabase: {submissions:,} submissions for {keys:,} idempotency keys ({primed} of them the primed, "
        f"replayed ones): {'one each' if submissions == keys else 'MISMATCH'}; "
        f"{unpublished} outbox rows left unpublished by the relay"
    )
    if submissions != keys:
        raise common.BenchFailure(f"{submissions} submissions for {keys} keys")


if __name__ == "__main__":
    common.run_main(main)
