"""The attempt page as a candidate feels it: click to results shown, in a real browser.

With web, worker, run worker and relay running (the Procfile's lines) and Debian's chromium
driven by Playwright, on a Python question of 20 tests, all of them visible examples (so Run
runs 20, as Submit does):

- run:    click "Run examples" -> the run's 20 cases drawn in the page
- submit: click "Submit answer" -> the graded result drawn in place (no reload)
- fetch:  the bare baseline, side by side: the page fetching `/healthz` (one round trip from
          the browser to the web server and back, nothing else)

Printed: p50 and p99 of each, and the targets (run p50 <= 150 ms, submit p50 <= 300 ms); then
each click's path step by step, from the rows' own times and the browser's clocks (one machine,
one clock): the click -> the submission or run committed -> its job claimed -> the result
committed -> the first byte of the response that carried it -> the panel drawn.

    .venv/bin/python benchmarks/bench_page.py [--rounds 20]

Needs chromium (`scripts/setup-system.sh --browser`), PostgreSQL on 127.0.0.1:5432 (user
postgres; BENCH_PG_* to change) and Redis on 127.0.0.1:6379, whose databases 14 and 15 it
flushes; port 18080 (BENCH_PORT).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks import common  # noqa: E402

DB_NAME = "ip_bench_page"
PASSWORD = "a benchmark password 1"
TESTS = 20
ANSWER = "def add(a, b):\n    return a + b\n"
TARGETS = {"run": 150.0, "submit": 300.0}
BASE = f"http://127.0.0.1:{common.WEB_PORT}"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="measured clicks of each kind")
    parser.add_argument("--keep-db", action="store_true", help=f"leave the {DB_NAME} database for inspection")
    return parser.parse_args()


def seed_attempt() -> tuple[str, int]:
    from django.contrib.auth import get_user_model
    from django.utils.timezone import now

    from attempts.models import Attempt, Question

    question = Question.objects.create(
        slug="bench-page-add",
        title="Add two numbers",
        kind="coding",
        difficulty="easy",
        prompt="Return `a + b`.",
        evaluator="code",
        evaluation_spec={
            "signature": {
                "function": "add",
                "params": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}],
                "returns": "int",
                "summary": "Return a + b.",
            },
            "tests": [{"name": f"t{i}", "args": [i, i * 3], "expected": i * 4, "visible": True} for i in range(TESTS)],
        },
    )
    user = get_user_model().objects.create_user(username="bench-page", password=PASSWORD)
    # The editor opens on this draft (the right answer), not on the generated starter.
    attempt = Attempt.objects.create(user=user, question=question, drafts={"python": ANSWER}, draft_saved_at=now())
    return user.username, attempt.pk


def log_in(page, username: str) -> None:
    page.goto(f"{BASE}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def measure(page, click: str, done_js: str, before_js: str) -> tuple[float, dict]:
    """The click's time to drawn, in ms, and its clocks in epoch ms: `click`, `drawn`, and the
    first byte of the last response whose URL has the click's `answered_by` part."""
    before = page.evaluate(before_js)
    page.evaluate("performance.clearResourceTimings()")
    clicked = page.evaluate("Date.now()")
    started = time.perf_counter()
    page.click(click)
    drawn = page.wait_for_function(done_js, arg=before, polling="raf", timeout=30_000).json_value()
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, {"click": clicked, "drawn": drawn}


FIRST_BYTE_JS = """(part) => {
  const entries = performance.getEntriesByType('resource').filter(e => e.name.includes(part));
  const last = entries[entries.length - 1];
  return last ? performance.timeOrigin + last.responseStart : null;
}"""


def _epoch_ms(moment) -> float:
    return moment.timestamp() * 1000


def clicks_step_by_step(attempt_id: int, clocks: dict[str, list[dict]]) -> dict[str, dict[str, list[float]]]:
    """Each measured click's steps, in ms, from its clocks and the rows it made (one run and one
    submission per round, in order; read once the browser is gone, as Django reads synchronously)."""
    from attempts.models import Result, Run, Submission

    runs = list(Run.objects.filter(attempt_id=attempt_id).order_by("id"))[-len(clocks["run"]) :]
    submissions = list(Submission.objects.filter(attempt_id=attempt_id).order_by("id"))[-len(clocks["submit"]) :]
    results = dict(Result.objects.filter(submission__in=submissions).values_list("submission_id", "created_at"))
    steps: dict[str, dict[str, list[float]]] = {"run": {}, "submit": {}}
    for run, clock in zip(runs, clocks["run"], strict=True):
        _add(steps["run"], _steps("run", run.pk, run.created_at, run.finished_at, clock))
    for submission, clock in zip(submissions, clocks["submit"], strict=True):
        _add(steps["submit"], _steps("evaluate", submission.pk, submission.created_at, results[submission.pk], clock))
    return steps


def _add(into: dict[str, list[float]], taken: dict[str, float]) -> None:
    for name, ms in taken.items():
        into.setdefault(name, []).append(ms)


def _steps(kind: str, subject_id: int, created, result_at, clock: dict) -> dict[str, float]:
    from evaluation.models import EvaluationJob, JobTry

    job = EvaluationJob.objects.filter(kind=kind, subject_id=subject_id).order_by("-id").first()
    tried = JobTry.objects.filter(job=job).order_by("number").first()
    points = [
        ("click -> committed", clock["click"], _epoch_ms(created)),
        ("committed -> claimed", _epoch_ms(created), _epoch_ms(tried.started_at)),
        ("claimed -> result committed", _epoch_ms(tried.started_at), _epoch_ms(result_at)),
        ("result -> first byte", _epoch_ms(result_at), clock["first_byte"]),
        ("first byte -> drawn", clock["first_byte"], clock["drawn"]),
    ]
    return {name: end - start for name, start, end in points}


RUN_BEFORE = "() => { const r = document.querySelector('[data-run-body] .run'); return r ? r.dataset.runId : null; }"
RUN_DONE = """(before) => {
  const r = document.querySelector('[data-run-body] .run:not([data-pending])');
  return r && r.dataset.runId !== before && r.querySelectorAll('.case').length > 0 && Date.now();
}"""
SUBMIT_BEFORE = "() => Number(document.querySelector('.live').dataset.version)"
SUBMIT_DONE = """(before) => {
  const l = document.querySelector('.live');
  return Number(l.dataset.version) > before && l.dataset.status === 'completed' && Date.now();
}"""
FETCH_JS = "async () => { const t = performance.now(); await fetch('/healthz'); return performance.now() - t; }"


def main() -> None:
    args = parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        raise common.BenchFailure("chromium is not installed: scripts/setup-system.sh --browser")
    print(f"bench_page: {common.machine_note()}")
    results: dict[str, list[float]] = {"fetch": [], "run": [], "submit": []}
    clocks: dict[str, list[dict]] = {"run": [], "submit": []}
    with common.fresh_database(DB_NAME, keep=args.keep_db) as env:
        username, attempt_id = seed_attempt()
        with common.Processes(env) as procs:
            with common.phase("start web, worker, run worker and relay"):
                procs.web()
                procs.worker()
                procs.worker(line="worker-run")
                procs.relay()
            with sync_playwright() as playwright, common.phase(f"{args.rounds} rounds of each click"):
                browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
                page = browser.new_page()
                log_in(page, username)
                page.goto(f"{BASE}/attempts/{attempt_id}/")
                page.wait_for_selector(".ace_editor")
                for number in range(args.rounds + 2):  # the first two warm the processes up
                    fetch = page.evaluate(FETCH_JS)
                    run, run_clocks = measure(page, "[data-run]", RUN_DONE, RUN_BEFORE)
                    # The run's panel came with its create, or with the panel it was followed at.
                    run_clocks["first_byte"] = page.evaluate(FIRST_BYTE_JS, "/runs/")
                    submit, submit_clocks = measure(page, "[data-submit]", SUBMIT_DONE, SUBMIT_BEFORE)
                    submit_clocks["first_byte"] = page.evaluate(FIRST_BYTE_JS, "/live/")
                    if number >= 2:
                        results["fetch"].append(fetch)
                        results["run"].append(run)
                        results["submit"].append(submit)
                        clocks["run"].append(run_clocks)
                        clocks["submit"].append(submit_clocks)
                browser.close()
        steps = clicks_step_by_step(attempt_id, clocks)

    rows = []
    for name, values in results.items():
        values.sort()
        p50 = common.percentile(values, 50)
        target = TARGETS.get(name)
        rows.append(
            [
                name,
                len(values),
                f"{p50:.0f} ms",
                f"{common.percentile(values, 99):.0f} ms",
                f"<= {target:.0f} ms {common.verdict(p50 <= target)}" if target else "baseline",
            ]
        )
    common.print_table(["click", "n", "p50", "p99", "target (p50)"], rows)
    for click, taken in steps.items():
        print(f"\n{click}, step by step (p50 / p99, ms):")
        common.print_table(
            ["step", "p50", "p99"],
            [
                [name, f"{common.percentile(sorted(v), 50):.0f}", f"{common.percentile(sorted(v), 99):.0f}"]
                for name, v in taken.items()
            ],
        )


if __name__ == "__main__":
    common.run_main(main)
