"""After the faults: wait until the system settles, then check every invariant and what each
accepted request should have become.

The rule for `failed`: a submission or a practice request may end `failed` only with a dead
letter saying its tries ran out ("gave up after N tries"), and only in a round whose faults can
end a try without an outcome (a kill, a worker started with crash_before_commit, a pause, a
broker restart, cut database connections). A dead letter for any other reason (a permanent
error) is a violation: no answer the drill sends is wrong for good.
"""

from __future__ import annotations

import collections
import http.client
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from chaos.client import GaveUp
from chaos.commands import manage, manage_json
from chaos.served import check_served
from chaos.workload import Sent, Workload

UNFINISHED_JOBS = ("pending", "queued", "running", "retrying")
# Moves when a try starts (a job's status changes) or ends (a status, or a finish or retry count).
_PROGRESS_SAMPLES = ("interviewprep_jobs", "interviewprep_jobs_finished_total", "interviewprep_jobs_retried_total")


# No try started or finished for this long, with work waiting: a consumer has stopped. Longer
# than a sweep of a dead run's job takes (STALE_JOB_AFTER plus SWEEP_INTERVAL).
STALL_SECONDS = 25.0


def settle(port: int, *, timeout: float, tick: Callable[[], None], stalled: Callable[[], None]) -> tuple[bool, float]:
    """Poll `/metrics` until no job is unfinished and the outbox is drained; (settled, seconds
    waited). `stalled` is called when nothing has moved for STALL_SECONDS while jobs wait."""
    started = time.monotonic()
    last, moved = None, started
    while True:
        tick()
        gauges = _job_gauges(port)
        now = time.monotonic()
        if gauges is not None:
            jobs, outbox, progress = gauges
            if jobs == 0 and outbox == 0:
                return True, now - started
            if progress != last:
                last, moved = progress, now
            elif now - moved > STALL_SECONDS:
                stalled()
                moved = now
        if now - started > timeout:
            return False, now - started
        time.sleep(0.5)


def _job_gauges(port: int) -> tuple[float, float, tuple] | None:
    """(unfinished jobs, unpublished outbox rows, what moves with progress) from `/metrics`, or
    None when the web does not answer."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            text = response.read().decode()
        finally:
            conn.close()
    except (OSError, http.client.HTTPException):
        return None
    if response.status != 200:
        return None
    jobs = outbox = 0.0
    progress = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "interviewprep_jobs" and sample.labels.get("status") in UNFINISHED_JOBS:
                jobs += sample.value
            elif sample.name == "interviewprep_outbox_unpublished":
                outbox = sample.value
            if sample.name in _PROGRESS_SAMPLES:
                progress.append((sample.name, tuple(sorted(sample.labels.items())), sample.value))
    return jobs, outbox, tuple(sorted(progress))


@dataclass
class Context:
    env: dict[str, str]
    port: int
    staff_token: str
    workload: Workload
    failures_possible: bool  # the rule above
    redis_paused: bool  # a cache lag is then the documented owed-floor case


def check_round(ctx: Context, settled: bool) -> tuple[list[str], list[str], str]:
    """(violations, notes, what was checked)."""
    violations: list[str] = list(ctx.workload.violations)
    notes: list[str] = []
    data = _load(ctx.env)
    if not settled:
        unfinished = [job for job in data["jobs"] if job["status"] in UNFINISHED_JOBS]
        violations += [f"did not settle: job {job}" for job in unfinished[:20]]
    violations += _invariants_command(ctx)
    violations += _check_jobs(data, ctx)
    violations += _check_submissions(data, ctx)
    violations += _check_practice_and_creates(data, ctx)
    try:
        cache_violations, lagging = check_served(data, ctx)
    except GaveUp as exc:
        cache_violations, lagging = [f"reading the attempts back: {exc}"], 0
    violations += cache_violations
    if lagging:
        notes.append(
            f"{lagging} attempt(s) served from an older cached copy without min_version (Redis was paused: allowed)"
        )
    statuses = collections.Counter(row["status"] for row in data["submissions"])
    checked = (
        f"{len(data['attempts'])} attempts, {len(data['submissions'])} submissions"
        f" ({', '.join(f'{n} {status}' for status, n in sorted(statuses.items()))}),"
        f" {len(data['practice'])} practice requests, {len(data['jobs'])} jobs, {len(data['letters'])} dead letters"
    )
    return violations, notes, checked


def _load(env: dict[str, str]) -> dict[str, list[dict]]:
    """The round's rows, as the apps' `*_state` commands print them: its database holds only the
    drill's candidates (and its staff user)."""
    data = manage_json(env, "attempts_state")
    jobs = manage_json(env, "jobs_state")
    return {**data, "jobs": jobs["jobs"], "letters": jobs["dead_letters"]}


def _invariants_command(ctx: Context) -> list[str]:
    done = manage(ctx.env, "check_invariants")
    if done.returncode == 0:
        return []
    lines = [line for line in done.stdout.splitlines() if line.strip()] or done.stderr.splitlines()[-5:]
    return [f"check_invariants: {line.strip()}" for line in lines[:40]]


def _failure_allowed(job: dict | None, letters: dict[int, str], ctx: Context) -> str | None:
    """None when this failure keeps the rule, else why it breaks it."""
    if job is None or job["status"] != "dead":
        return f"failed without a dead job ({job and job['status']})"
    error = letters.get(job["id"])
    if error is None:
        return f"job {job['id']} is dead without a dead letter"
    if not error.startswith("gave up after"):
        return f"job {job['id']} dead-lettered for a permanent error: {error[:300]}"
    if not ctx.failures_possible:
        return f"job {job['id']} used up its tries in a round without a fault that ends tries: {error[:200]}"
    return None


def _check_jobs(data: dict, ctx: Context) -> list[str]:
    letters = {row["job_id"]: row["error"] for row in data["letters"]}
    out = []
    for job in data["jobs"]:
        if job["tries"] > job["max_tries"]:
            out.append(f"job {job['id']} has {job['tries']} tries over its limit {job['max_tries']}")
        if job["status"] == "dead" and job["id"] not in letters:
            out.append(f"job {job['id']} is dead without a dead letter")
    return out


def _last_job(data: dict, kind: str) -> dict[int, dict]:
    last: dict[int, dict] = {}
    for job in data["jobs"]:  # by id: the last one of a subject wins
        if job["kind"] == kind:
            last[job["subject_id"]] = job
    return last


def _check_submissions(data: dict, ctx: Context) -> list[str]:
    out = []
    letters = {row["job_id"]: row["error"] for row in data["letters"]}
    jobs = _last_job(data, "evaluate")
    results = {row["submission_id"]: row for row in data["results"]}
    user_of = {row["username"]: row["id"] for row in data["users"]}
    by_key = collections.defaultdict(list)
    by_attempt = collections.defaultdict(list)
    for sub in data["submissions"]:
        by_key[(sub["user_id"], sub["idempotency_key"])].append(sub)
        by_attempt[sub["attempt_id"]].append(sub)
    expectations: dict[tuple[int, str], str] = {}
    for sent in (s for s in ctx.workload.sent if s.kind == "submit"):
        key = (user_of.get(sent.username), sent.key)
        expectations[key] = sent.expect
        rows = by_key.get(key, [])
        if sent.confirmed:
            accepted = sent.answer.json()["submission_id"]
            if [r["id"] for r in rows] != [accepted]:
                out.append(f"key {sent.key}: accepted as submission {accepted}, stored as {[r['id'] for r in rows]}")
        elif len(rows) > 1:
            out.append(f"key {sent.key} (never answered) made {len(rows)} submissions")
    for (user_id, key), rows in by_key.items():
        if key and len({r["attempt_id"] for r in rows}) < len(rows):
            out.append(f"user {user_id} key {key}: {len(rows)} submissions")
    for attempt in data["attempts"]:
        subs = sorted(by_attempt.get(attempt["id"], []), key=lambda r: r["id"])
        where = f"attempt {attempt['id']}"
        if not subs:
            if attempt["status"] != "draft" or attempt["latest_submission_id"] is not None:
                out.append(
                    f"{where}: no submission, yet {attempt['status']} with latest {attempt['latest_submission_id']}"
                )
            continue
        latest = subs[-1]
        if attempt["latest_submission_id"] != latest["id"]:
            out.append(f"{where}: latest is {attempt['latest_submission_id']}, newest submission is {latest['id']}")
        if latest["status"] not in ("completed", "failed"):
            out.append(f"{where}: latest submission {latest['id']} ended {latest['status']}")
        elif attempt["status"] != latest["status"]:
            out.append(f"{where}: {attempt['status']} while its latest submission is {latest['status']}")
        for sub in subs:
            allowed = ("completed", "failed") if sub is latest else ("superseded", "completed", "failed")
            if sub["status"] not in allowed:
                out.append(f"{where}: submission {sub['id']} ended {sub['status']}")
            if sub["status"] == "failed" and (why := _failure_allowed(jobs.get(sub["id"]), letters, ctx)):
                out.append(f"{where}: submission {sub['id']} failed: {why}")
            if sub["status"] == "completed" and sub["id"] not in results:
                out.append(f"{where}: submission {sub['id']} completed without a result")
        if latest["status"] == "completed" and latest["id"] in results:
            expect = expectations.get((latest["user_id"], latest["idempotency_key"]), "")
            if (why := _unexpected_result(results[latest["id"]], expect)) is not None:
                out.append(f"{where}: submission {latest['id']} {why}")
    return out


def _unexpected_result(result: dict, expect: str) -> str | None:
    details = result["details"] or {}
    if expect.startswith("score=") and result["score"] != float(expect.removeprefix("score=")):
        return f"scored {result['score']}, its answer asked for {expect}"
    if expect == "all-pass" and details.get("passed") != details.get("total"):
        return f"reference answer passed {details.get('passed')}/{details.get('total')} ({details.get('mode')})"
    if expect == "not-all-pass" and details.get("passed") == details.get("total"):
        return f"wrong answer passed every test ({details.get('total')})"
    return None


def _check_practice_and_creates(data: dict, ctx: Context) -> list[str]:
    """One request is one practice request or attempt, whatever the replays; none ends stuck."""
    out = []
    letters = {row["job_id"]: row["error"] for row in data["letters"]}
    jobs = _last_job(data, "generate")
    user_of = {row["username"]: row["id"] for row in data["users"]}
    practice = {row["id"]: row for row in data["practice"]}
    made = collections.Counter(row["user_id"] for row in data["practice"])
    opened = collections.Counter(row["user_id"] for row in data["attempts"])
    by_practice = collections.Counter(row["user_id"] for row in data["practice"] if row["attempt_id"])
    for row in data["practice"]:
        if row["status"] == "completed" and row["attempt_id"] is None:
            out.append(f"practice request {row['id']} completed without an attempt")
        elif row["status"] == "failed" and (why := _failure_allowed(jobs.get(row["id"]), letters, ctx)):
            out.append(f"practice request {row['id']} failed: {why}")
        elif row["status"] not in ("completed", "failed"):
            out.append(f"practice request {row['id']} ended {row['status']}")
    for username, user_id in user_of.items():
        mine = [s for s in ctx.workload.sent if s.username == username]
        for kind, count, extra in (("practice", made, 0), ("create", opened, by_practice[user_id])):
            sent = _distinct(s for s in mine if s.kind == kind)
            confirmed = sum(1 for s in sent if s.confirmed)
            low, high = confirmed + extra, len(sent) + extra
            if not low <= count[user_id] <= high:
                out.append(f"{username}: {count[user_id]} {kind} rows for {confirmed} accepted keys (+{extra})")
        for sent in (s for s in mine if s.kind == "practice" and s.confirmed):
            if sent.answer.json()["id"] not in practice:
                out.append(f"{username}: practice request {sent.answer.json()['id']} was accepted and is missing")
    return out


def _distinct(sent) -> list[Sent]:
    return list({s.key: s for s in sent}.values())
