"""The sweeper runs in the relay and says so; each worker reports whether it consumes; the audit
waits for the sweeper's next pass before it calls a stuck job broken."""

import dataclasses
import signal
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils import timezone

from attempts.models import Result
from attempts.services.invariants import invariants_check
from evaluation.jobs import jobs_sweep
from evaluation.jobs.liveness import sweeper_state, workers_state
from evaluation.jobs.queue_depths import queue_depths
from evaluation.models import EvaluationJob, JobStatus, ProcessBeat
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import start_relay, start_worker, wait_for


def config(**changes):
    return override_settings(CONFIG=dataclasses.replace(settings.CONFIG, **changes))


def job_status(job_id):
    return EvaluationJob.objects.get(pk=job_id).status


def worker_row(name, *, queues="evaluate", room_for=0.0, took=None, beat_age=0.0):
    now = timezone.now()
    return ProcessBeat.objects.create(
        name=name,
        role=ProcessBeat.Role.WORKER,
        queues=queues,
        beat_at=now - timedelta(seconds=beat_age),
        room_since=None if room_for is None else now - timedelta(seconds=room_for),
        took_job_at=None if took is None else now - timedelta(seconds=took),
    )


@pytest.mark.django_db
def test_a_worker_with_room_and_messages_waiting_that_takes_none_is_stalled():
    with config(worker_stall_after=10):
        worker_row("stuck@h:1", room_for=300, took=30)  # room for 5 minutes, took its last job 30 s ago
        worker_row("busy@h:2", room_for=None, took=300)  # every child busy: taking none is right
        worker_row("fresh@h:3", room_for=300, took=2)  # took a job 2 s ago
        worker_row("other@h:4", queues="run", room_for=300, took=300)  # its queue is empty
        worker_row("gone@h:5", room_for=300, took=300, beat_age=60)  # silent: not judged here
        states = {w.name: w for w in workers_state(depths={"evaluate": 3, "run": 0})}
        assert sorted(states) == ["busy@h:2", "fresh@h:3", "other@h:4", "stuck@h:1"]
        assert [name for name, w in sorted(states.items()) if w.stalled] == ["stuck@h:1"]
        assert 29 < states["stuck@h:1"].idle_seconds < 40
        # An unknown depth (the broker did not answer) never makes a stall.
        assert not any(w.stalled for w in workers_state(depths={"evaluate": -1}))


@pytest.mark.django_db
def test_healthz_names_a_stalled_worker_and_an_overdue_sweeper_and_stays_200(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["liveness"]["sweeper"]["status"].startswith("never")
    jobs_sweep()
    worker_row("stuck@h:1", room_for=300, took=300)
    with config(worker_stall_after=10):
        # Depths come from the real broker: one message waits in the stalled worker's queue.
        broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        broker.lpush("evaluate", "{}")
        broker.close()
        assert queue_depths()["evaluate"] == 1
        body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["liveness"]["status"] == "degraded"
    assert body["liveness"]["sweeper"]["status"] == "ok"
    assert body["liveness"]["stalled"] == ["stuck@h:1"]
    ProcessBeat.objects.filter(name="sweeper").update(beat_at=timezone.now() - timedelta(seconds=3600))
    assert client.get("/healthz").json()["liveness"]["sweeper"]["status"].startswith("overdue")
    with config(worker_stall_after=10), pytest.raises(CommandError, match="stuck@h:1 stalled"):
        call_command("worker_liveness", hostname="stuck@h")


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_reports_the_jobs_it_takes_and_leaves_when_stopped(tmp_path, capsys):
    worker = start_worker(tmp_path, concurrency=1, queues="evaluate")
    relay = start_relay(tmp_path)
    try:
        row = wait_for(lambda: ProcessBeat.objects.filter(role="worker").first(), message="the worker's first report")
        assert row.queues == "evaluate" and row.room_since is not None
        started = row.took_job_at
        _, job = submit_via_service(AttemptFactory(), "score=64")
        wait_for(lambda: job_status(job) == JobStatus.SUCCEEDED, message="the job run")
        wait_for(
            lambda: ProcessBeat.objects.get(pk=row.pk).took_job_at > started, message="the report of the job taken"
        )
        call_command("worker_liveness", hostname=row.name.rsplit(":", 1)[0])
        assert "ok" in capsys.readouterr().out
        worker.stop()
        assert not ProcessBeat.objects.filter(pk=row.pk).exists()
    finally:
        worker.stop()
        relay.stop()


@pytest.mark.django_db(transaction=True)
def test_the_relay_sweeps_a_killed_workers_job_and_the_audit_never_cries_wolf_meanwhile(tmp_path):
    # The relay sweeps every 2 s for jobs silent 3 s; the worker is killed with its job.
    fast = {"STALE_JOB_AFTER": "3", "SWEEP_INTERVAL": "2"}
    first = start_worker(tmp_path, concurrency=1, EVALUATOR_FAULTS="delay=3")
    relay = start_relay(tmp_path, **fast)
    second = None
    try:
        submission, job = submit_via_service(AttemptFactory(), "score=58")
        wait_for(lambda: job_status(job) == JobStatus.RUNNING, message="the job running")
        first.kill(signal.SIGKILL)
        # The sweeper is held while the job goes silent past its threshold, so the audit is sure to
        # see a job the sweeper has yet to pass over (which is not broken) before the sweep.
        relay.kill(signal.SIGSTOP)
        audits = []
        with config(stale_job_after=3, sweep_interval=2):

            def audited(done):
                row = EvaluationJob.objects.get(pk=job)
                # One reading of the clock for the audit and the condition: the audit takes its
                # time, and a second reading could pass the threshold the recorded one missed.
                silent = timezone.now() - row.heartbeat_at
                if row.status == JobStatus.RUNNING:
                    audits.append((silent, invariants_check()))
                return done(row, silent)

            try:
                wait_for(
                    lambda: audited(lambda row, silent: silent > timedelta(seconds=3)),
                    interval=0.1,
                    message="the job silent past the threshold",
                )
            finally:
                relay.kill(signal.SIGCONT)
            second = start_worker(tmp_path, concurrency=1)
            wait_for(
                lambda: audited(lambda row, silent: row.status == JobStatus.SUCCEEDED),
                timeout=60,
                interval=0.1,
                message="the swept job finished",
            )
        assert Result.objects.get(submission_id=submission).score == 58
        assert any(silent > timedelta(seconds=3) for silent, _ in audits), "audited past the threshold"
        assert [violations for _, violations in audits if violations] == []
        assert sweeper_state().age_seconds < 30
    finally:
        for process in (first, relay, second):
            if process:
                process.stop()


@pytest.mark.django_db
def test_the_audit_reports_a_stuck_job_once_the_sweeper_has_had_its_threshold_and_interval():
    _, job = submit_via_service(AttemptFactory(), "score=1")
    with config(stale_job_after=60, sweep_interval=30):
        EvaluationJob.objects.filter(pk=job).update(
            status=JobStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(seconds=80)
        )
        assert not invariants_check()  # past 60 s, within 60 + 30: the next pass repairs it
        EvaluationJob.objects.filter(pk=job).update(heartbeat_at=timezone.now() - timedelta(seconds=100))
        assert [v.check for v in invariants_check()] == ["no_running_job_without_heartbeat"]
