"""The attempt page as a candidate feels it: click to results shown, in a real browser.

With web, worker, run worker and relay running (the Procfile's lines) and Debian's chromium
driven by Playwright, on a Python question of 20 tests, all of them visible examples (so Run
runs 20, as Submit does):

- run:    click "Run examples" -> the run's 20 cases drawn in the page
- submit: click "Submit answer" -> the graded result drawn in place (no reload)
- fetch:  the bare baseline, side by side: the page fetching `/healthz` (one round trip from
          the browser to the web server and back, nothing else)

Printed: p50 and p99 of each, and the targets (run p50 <= 150 ms, submit p50 <= 300 ms).

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


def measure(page, click: str, done_js: str, before_js: str) -> float:
    before = page.evaluate(before_js)
    started = time.perf_counter()
    page.click(click)
    page.wait_for_function(done_js, arg=before, polling="raf", timeout=30_000)
    return (time.perf_counter() - started) * 1000


RUN_BEFORE = "() => { const r = document.querySelector('[data-run-body] .run'); return r ? r.dataset.runId : null; }"
RUN_DONE = """(before) => {
  const r = document.querySelector('[data-run-body] .run:not([data-pending])');
  return r && r.dataset.runId !== before && r.querySelectorAll('.case').length > 0;
}"""
SUBMIT_BEFORE = "() => Number(document.querySelector('.live').dataset.version)"
SUBMIT_DONE = """(before) => {
  const l = document.querySelector('.live');
  return Number(l.dataset.version) > before && l.dataset.status === 'completed';
}"""
FETCH_JS = "async () => { const t = performance.now(); await fetch('/healthz'); return performance.now() - t; }"


def main() -> None:
    args = parse_args()
    executable = shutil.which("chromium")
    if executable is None:
        raise common.BenchFailure("chromium is not installed: scripts/setup-system.sh --browser")
    print(f"bench_page: {common.machine_note()}")
    results: dict[str, list[float]] = {"fetch": [], "run": [], "submit": []}
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
                    run = measure(page, "[data-run]", RUN_DONE, RUN_BEFORE)
                    submit = measure(page, "[data-submit]", SUBMIT_DONE, SUBMIT_BEFORE)
                    if number >= 2:
                        results["fetch"].append(fetch)
                        results["run"].append(run)
                        results["submit"].append(submit)
                browser.close()

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


if __name__ == "__main__":
    common.run_main(main)
