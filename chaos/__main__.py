"""`python -m chaos`: seeded rounds of real processes under random faults, each
ending with every invariant checked (docs/operations.md#the-chaos-drill)."""

from __future__ import annotations

import argparse
import collections
import os
import random
import shlex
import signal
import sys
import time

from chaos.known import KNOWN_ISSUES
from chaos.round import Options, Report, keep_or_drop, run_round
from chaos.schedule import plan_round
from chaos.services import DEFAULT_SERVER_URL, ChaosSetupError, Postgres
from chaos.setup import question_pool, template_create
from interviewprep.processes import ProcessError

# Seeds 1987 and 1988 plan every kind of fault between them, a crash_before_commit worker among them.
SHORT = {"runs": 2, "first_seed": 1987, "candidates": 3, "duration": 6.0, "faults": "3-4", "web_workers": 2}
NORMAL = {"runs": 20, "first_seed": None, "candidates": 6, "duration": 20.0, "faults": "3-6", "web_workers": None}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m chaos", description=__doc__)
    parser.add_argument("--runs", type=int, help="rounds to run (default 20; 2 with --short)")
    parser.add_argument("--seed", type=int, help="replay one round: its plan derives from the seed alone")
    parser.add_argument(
        "--first-seed", type=int, help="seed of the first round; the next ones count up (default: random)"
    )
    parser.add_argument("--candidates", type=int, help="concurrent candidates per round (default 6; 3 with --short)")
    parser.add_argument(
        "--duration", type=float, help="seconds of workload and faults per round (default 20; 6 with --short)"
    )
    parser.add_argument("--faults", help="faults per round as MIN-MAX (default 3-6; 3-4 with --short)")
    parser.add_argument(
        "--web-workers", type=int, help="replace the web line's --workers (default: as the Procfile says)"
    )
    parser.add_argument("--settle-timeout", type=float, default=120.0, help="seconds to wait for the system to settle")
    parser.add_argument("--short", action="store_true", help="the CI drill: 2 small rounds with fixed seeds")
    parser.add_argument(
        "--tolerate",
        action="append",
        default=[],
        choices=[issue.id for issue in KNOWN_ISSUES],
        help="count a known, unfixed product bug apart instead of as a violation (chaos/known.py)",
    )
    parser.add_argument(
        "--keep-db", action="store_true", help="keep a failing round's database (its logs are always kept)"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("CHAOS_DATABASE_URL") or os.environ.get("DATABASE_URL") or DEFAULT_SERVER_URL,
        help="the PostgreSQL server (any database name): the drill creates and drops ip_chaos_* databases there",
    )
    args = parser.parse_args(argv)
    for name, value in (SHORT if args.short else NORMAL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.seed is not None:
        args.runs, args.first_seed = 1, args.seed
    if args.first_seed is None:
        args.first_seed = random.SystemRandom().randrange(1, 10**6)
    try:
        low, high = (int(n) for n in args.faults.split("-"))
        args.fault_range = (low, high)
    except ValueError:
        parser.error(f"--faults {args.faults!r} must look like 3-6")
    return args


def replay_command(args: argparse.Namespace, seed: int) -> str:
    words = ["python", "-m", "chaos", "--seed", str(seed), "--candidates", str(args.candidates)]
    words += ["--duration", f"{args.duration:g}", "--faults", args.faults]
    if args.web_workers:
        words += ["--web-workers", str(args.web_workers)]
    for issue in args.tolerate:
        words += ["--tolerate", issue]
    return shlex.join(words)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    say = lambda text: print(text, flush=True)  # noqa: E731
    pg = Postgres(args.database_url)
    template = f"ip_chaos_{os.getpid()}_template"
    reports: list[Report] = []
    began = time.monotonic()
    try:
        for name in pg.drop_leftovers():
            say(f"dropped {name}, left by a drill that died")
        say(
            f"chaos: {args.runs} round(s) from seed {args.first_seed}, {args.candidates} candidates, "
            f"{args.duration:g} s of workload and {args.faults} faults each"
        )
        step = time.monotonic()
        questions = question_pool(template_create(pg, template))
        say(f"template database ready in {time.monotonic() - step:.1f} s ({len(questions)} questions)")
        options = Options(
            web_workers=args.web_workers, settle_timeout=args.settle_timeout, tolerate=frozenset(args.tolerate)
        )
        for number in range(args.runs):
            seed = args.first_seed + number
            plan = plan_round(seed, candidates=args.candidates, duration=args.duration, faults=args.fault_range)
            say(
                f"round {number + 1}/{args.runs}  seed {seed}  plan: "
                + ", ".join(f"{f.describe()} at {f.at:.1f} s" for f in plan.faults)
            )
            report = run_round(plan, pg=pg, template=template, questions=questions, options=options, say=say)
            keep_or_drop(report, pg, args.keep_db)
            reports.append(report)
            _print_round(report, args, say)
    except (ChaosSetupError, ProcessError) as exc:
        say(f"chaos: could not set a round up: {exc}")
        return 2
    except KeyboardInterrupt:
        say("chaos: interrupted; every process started was stopped")
        return 130
    finally:
        pg.drop(template)
    return _print_summary(reports, args, time.monotonic() - began, say)


def _print_round(report: Report, args: argparse.Namespace, say) -> None:
    for note in report.notes:
        say(f"  note: {note}")
    for issue, violation in report.tolerated:
        say(f"    tolerated (known issue {issue}): {violation}")
    say(f"  violations: {len(report.violations)}  ({report.seconds:.1f} s)")
    for violation in report.violations[:30]:
        say(f"    VIOLATION {violation}")
    if report.violations:
        say(f"  replay: {replay_command(args, report.seed)}")
        say(f"  process logs: {report.logdir}" + (f"; database kept: {report.database}" if report.database else ""))
    elif report.logdir:
        say(f"  process logs kept for the unexpected exits: {report.logdir}")


def _print_summary(reports: list[Report], args: argparse.Namespace, seconds: float, say) -> int:
    faults = sum((r.faults for r in reports), collections.Counter())
    failed = [r for r in reports if r.violations]
    say("")
    say(
        f"chaos: {len(reports)} rounds in {seconds:.0f} s, {sum(faults.values())} faults injected "
        f"({', '.join(f'{kind} {n}' for kind, n in sorted(faults.items()))})"
    )
    exits = sum(r.exits for r in reports)
    if exits:
        say(f"chaos: {exits} processes exited without being killed (restarted; see the rounds' notes)")
    tolerated = collections.Counter(issue for r in reports for issue, _ in r.tolerated)
    apart = f" ({', '.join(f'{n} tolerated as known issue {i}' for i, n in tolerated.items())})" if tolerated else ""
    say(f"chaos: {sum(len(r.violations) for r in reports)} violations{apart}")
    for report in failed:
        say(
            f"chaos: FAILED seed {report.seed}: {len(report.violations)} violations; replay with: "
            f"{replay_command(args, report.seed)}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
