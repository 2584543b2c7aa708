"""The shipped Prometheus rules and Grafana dashboard (ops/): the rules parse, and every metric
they name is in a real /metrics scrape; the gauges added for them read where the truth lives."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from django.core.management import call_command
from django.test import Client

from evaluation.breaker import remote_model_breaker
from evaluation.check_outcomes import check_outcome_record
from interviewprep import metrics
from tests.processes import ROOT
from tests.web_server import start_web

pytestmark = pytest.mark.django_db

RULES = ROOT / "ops" / "prometheus" / "alerts.yml"
GRAFANA = ROOT / "ops" / "grafana" / "interviewprep.json"
METRIC = re.compile(r"\binterviewprep_[a-z_]+\b")


def _names(text: str) -> set[str]:
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def _samples(text: str) -> dict[str, float]:
    return {
        name: float(value)
        for line in text.splitlines()
        if line and not line.startswith("#")
        for name, value in [line.rsplit(" ", 1)]
    }


def test_the_alert_rules_pass_promtool():
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed: `bash scripts/setup-system.sh --browser` installs it (make test does)")
    checked = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 7 rules found" in checked.stdout


def test_every_metric_the_rules_and_grafana_use_is_in_a_real_scrape(transactional_db, tmp_path):
    expressions = [target["expr"] for panel in json.loads(GRAFANA.read_text())["panels"] for target in panel["targets"]]
    used = set(METRIC.findall(RULES.read_text())) | {name for expr in expressions for name in METRIC.findall(expr)}
    assert {"interviewprep_breaker_state", "interviewprep_invariant_violations"} <= used
    # A labelled counter has no series until its first count: count one of each, as a running
    # site has, in this process (the server merges the same folder).
    metrics.incr("interviewprep_dead_letters_total", {"kind": "evaluate"})
    metrics.incr("interviewprep_cache_requests_total", {"outcome": "hit"})
    metrics.incr("interviewprep_jobs_finished_total", {"kind": "evaluate", "status": "succeeded"})
    metrics.incr("interviewprep_jobs_retried_total", {"kind": "evaluate"})
    metrics.incr("interviewprep_lock_contention_total", {"kind": "evaluate"})
    metrics.observe("interviewprep_job_latency_seconds", 0.2, {"kind": "evaluate"})
    web = start_web(tmp_path)
    try:
        status, body, _ = web.request("/metrics")
    finally:
        web.process.stop()
    assert status == 200
    scraped = _names(body["raw"].decode())
    assert used - scraped == set()


def test_the_breaker_and_invariant_gauges_read_their_truth():
    before = _samples(Client().get("/metrics").content.decode())
    assert before['interviewprep_breaker_state{breaker="remote-model",state="closed"}'] == 1
    assert before['interviewprep_breaker_state{breaker="remote-model",state="open"}'] == 0
    assert before["interviewprep_invariant_violations"] == -1
    assert before['interviewprep_oldest_waiting_job_age_seconds{kind="evaluate"}'] == 0
    breaker = remote_model_breaker()
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()
    check_outcome_record(name="invariants", failures=2, detail="a, b")

    after = _samples(Client().get("/metrics").content.decode())

    assert after['interviewprep_breaker_state{breaker="remote-model",state="open"}'] == 1
    assert after['interviewprep_breaker_state{breaker="remote-model",state="closed"}'] == 0
    assert after["interviewprep_invariant_violations"] == 2
    assert 0 <= after["interviewprep_invariant_check_age_seconds"] < 60


def test_check_invariants_records_its_outcome_for_the_gauge():
    call_command("check_invariants")

    scraped = _samples(Client().get("/metrics").content.decode())
    assert scraped["interviewprep_invariant_violations"] == 0
