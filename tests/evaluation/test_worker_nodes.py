"""The node drill (`make drills`): three worker nodes against one broker and one database, one
of them lost outright a third of the way through a steady load of submits, a fourth added; every
job finishes exactly once and none waits past the sweeper's threshold.

A node is the Procfile's `worker` line under a hostname of its own (tests/nodes.py), in a network
namespace of its own where the machine allows: losing it cuts its link first, then kills its
whole process group, so PostgreSQL and the broker never see its connections close. It runs on
each broker: the test process's Redis database and its RabbitMQ virtual host."""

import collections
import dataclasses
import os
import threading
import time
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from attempts.models import Attempt, Result, Submission
from attempts.services.attempts import submission_create
from evaluation.jobs import sweep_allowance
from evaluation.models import EvaluationJob, JobStatus, JobTry, Outbox
from interviewprep.config import load
from tests import processes
from tests.factories import AttemptFactory, QuestionFactory
from tests.helpers import submit_via_service, wait_while_progressing
from tests.nodes import namespaces_unavailable, start_node
from tests.processes import start_relay, wait_for
from tests.rabbitmq import on_both_brokers

JOBS = int(os.environ.get("NODE_DRILL_JOBS", "600"))
RATE = float(os.environ.get("NODE_DRILL_RATE", "10"))  # submits per second
# Each evaluation holds its child this long (as one waits on its sandbox), so the lost node has
# jobs in hand when it goes: the broker deals a steady load out in turn, a job to each node every
# 3 / RATE = 0.3 s, so an evaluation longer than that is what keeps a node's two children busy at
# once (at 0.2 s a fast machine never overlapped them). Two children a node, not the Procfile's
# four: four nodes' connections fit beside other tests' in one PostgreSQL's max_connections.
EVALUATION_SECONDS = 0.45
CHILDREN = 2
STALE_JOB_AFTER, SWEEP_INTERVAL = 4, 2
# Below STALE_JOB_AFTER, so a transaction the lost node left open ends before its job is due.
IDLE_TRANSACTION_TIMEOUT = 3
# Beyond the sweeper's threshold and interval: the relay's publish, the claim, the run itself,
# and a loaded 2-core machine's scheduling (a node starting takes both cores for seconds).
MARGIN = 4.0


def _attempts(count: int) -> list[Attempt]:
    """One attempt for each of `count` candidates: the fair share limits each candidate's jobs in
    flight, and a crowd of candidates is what keeps every node busy."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"node-drill-{i}", password="!") for i in range(count)
    )
    question = QuestionFactory()
    return Attempt.objects.bulk_create(Attempt(user=user, question=question) for user in users)


class Load(threading.Thread):
    """Submits through the service at a steady pace, one per attempt; `third` is set a third of
    the way through."""

    def __init__(self, attempts: list[Attempt]) -> None:
        super().__init__(daemon=True, name="node drill load")
        self.attempts = attempts
        self.third = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            started = time.monotonic()
            for i, attempt in enumerate(self.attempts):
                ahead = started + i / RATE - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)  # the load's pace, not a wait for anything
                submission_create(user=attempt.user, attempt_id=attempt.pk, answer=f"score={i % 101}")
                if i + 1 == len(self.attempts) // 3:
                    self.third.set()
        except BaseException as exc:
            self.error = exc
        finally:
            self.third.set()
            connection.close()


def _per_second(times: list, start, end) -> float:
    seconds = (end - start).total_seconds()
    return sum(start <= t < end for t in times) / seconds if seconds > 0 else 0.0


def _job_lockable(job_id: int) -> bool:
    with transaction.atomic():
        return EvaluationJob.objects.select_for_update(skip_locked=True).filter(pk=job_id).exists()


@pytest.mark.django_db(transaction=True)
def test_a_transaction_a_lost_node_left_open_lets_go_of_its_locks_after_the_idle_timeout():
    # The lost node's session, as the app's configuration opens one: its row lock held, its
    # client gone without a word (nothing more is sent on it).
    _, job_id = submit_via_service(AttemptFactory(), "score=5")
    db = load({"DATABASE_URL": processes.test_database_url(), "DATABASE_IDLE_TRANSACTION_TIMEOUT": "1"}).database
    lost = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"], host=db["HOST"], port=db["PORT"], **db["OPTIONS"]
    )
    try:
        lost.execute("SELECT id FROM evaluation_evaluationjob WHERE id = %s FOR UPDATE", [job_id])
        # The sweeper passes over a locked job: it stays stuck while the lock is held.
        assert not _job_lockable(job_id)
        wait_for(lambda: _job_lockable(job_id), timeout=30, message="the idle transaction ended")
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            lost.execute("SELECT 1")
    finally:
        lost.close()


@pytest.mark.drill
@on_both_brokers()
@pytest.mark.django_db(transaction=True)
def test_a_node_lost_mid_load_and_one_added_every_job_finishes_once_within_the_sweep(
    broker, tmp_path, assert_invariants
):
    unavailable = "NODE_DRILL_NAMESPACES=off" if os.environ.get("NODE_DRILL_NAMESPACES") == "off" else None
    unavailable = unavailable or namespaces_unavailable()
    namespace = unavailable is None
    drill = dataclasses.replace(settings.CONFIG, stale_job_after=STALE_JOB_AFTER, sweep_interval=SWEEP_INTERVAL)
    node_env = {
        "EVALUATOR_FAULTS": f"delay={EVALUATION_SECONDS}",
        "SWEEP_INTERVAL": str(SWEEP_INTERVAL),
        "DATABASE_IDLE_TRANSACTION_TIMEOUT": str(IDLE_TRANSACTION_TIMEOUT),
    }
    nodes, relay, load = [], None, None
    with override_settings(CONFIG=drill):
        bound = sweep_allowance() + MARGIN
        try:
            attempts = _attempts(JOBS)
            connection.close()
            nodes = [start_node(tmp_path, i, namespace=namespace, children=CHILDREN, **node_env) for i in (1, 2, 3)]
            relay = start_relay(tmp_path, SWEEP_INTERVAL=str(SWEEP_INTERVAL))
            load = Load(attempts)
            load_started = timezone.now()
            load.start()
            assert load.third.wait(timeout=JOBS / RATE + 120), "the load never reached a third"
            assert load.error is None, load.error
            victim = nodes[0]
            # Lost while every child of it holds a job.
            wait_for(
                lambda: (
                    JobTry.objects.filter(outcome=JobTry.Outcome.RUNNING, worker__startswith=f"{victim.name}@").count()
                    >= CHILDREN
                ),
                timeout=30,
                interval=0.01,
                message=f"{victim.name} running a job in each child",
            )
            lost_at = timezone.now()
            victim.lose()
            fourth_started = time.monotonic()
            nodes.append(start_node(tmp_path, 4, namespace=namespace, children=CHILDREN, **node_env))
            fourth_ready = time.monotonic() - fourth_started
            load.join(timeout=JOBS / RATE + 120)
            assert not load.is_alive() and load.error is None, load.error or "the load never finished"
            wait_while_progressing(
                lambda: EvaluationJob.objects.filter(kind="evaluate", status=JobStatus.SUCCEEDED).count(), JOBS
            )
        finally:
            if load is not None:
                load.join(timeout=60)
            for process in [*nodes, relay]:
                if process is not None:
                    process.stop()

        jobs = {j.pk: j for j in EvaluationJob.objects.filter(kind="evaluate")}
        tries = list(JobTry.objects.filter(job_id__in=jobs).order_by("job_id", "number"))
        by_job = collections.defaultdict(list)
        for job_try in tries:
            by_job[job_try.job_id].append(job_try)

        # Every job finished exactly once: one succeeded try, one result, its submission completed.
        assert len(jobs) == JOBS
        assert {j.status for j in jobs.values()} == {JobStatus.SUCCEEDED}
        succeeded = collections.Counter(t.job_id for t in tries if t.outcome == JobTry.Outcome.SUCCEEDED)
        assert sorted(set(succeeded.values())) == [1] and len(succeeded) == JOBS
        assert Result.objects.count() == JOBS
        assert Submission.objects.filter(status="completed").count() == JOBS
        assert_invariants()

        # The lost node's tries: ended as abandoned, none begun after it was lost, each taken again.
        victim_tries = [t for t in tries if t.worker.startswith(f"{victim.name}@")]
        lost_tries = [t for t in victim_tries if t.outcome != JobTry.Outcome.SUCCEEDED]
        assert lost_tries, f"{victim.name} was lost with no job in hand"
        assert {t.outcome for t in lost_tries} == {JobTry.Outcome.ABANDONED}
        assert not [t for t in victim_tries if t.started_at > lost_at]
        reclaims = {
            t.job_id: (next(n for n in by_job[t.job_id] if n.number > t.number).started_at - lost_at).total_seconds()
            for t in lost_tries
        }
        waits = {pk: (j.finished_at - j.created_at).total_seconds() for pk, j in jobs.items()}
        # Sent to the broker more than once: a lost node's job swept, or a message lost with it.
        resent = collections.Counter(Outbox.objects.filter(job_id__in=jobs).values_list("job_id", flat=True))
        resent = {pk for pk, rows in resent.items() if rows > 1}
        fourth_took = sum(1 for t in tries if t.worker.startswith("evaluate-node4@") and t.outcome == "succeeded")

        finishes = [j.finished_at for j in jobs.values()]
        ordered = sorted(waits.values())
        median, p99 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.99)]
        print(
            f"\nnode drill: {JOBS} jobs at {RATE:g}/s, {EVALUATION_SECONDS} s each, 3 nodes of {CHILDREN} children,"
            f" {'network namespaces' if namespace else f'process groups ({unavailable})'},"
            f" broker {settings.CELERY_BROKER_URL.split('://')[0]}"
            f"\n  finished per second: {_per_second(finishes, load_started, lost_at):.1f} before the loss,"
            f" {_per_second(finishes, lost_at, max(finishes) + timedelta(microseconds=1)):.1f} after"
            f"\n  {victim.name} lost with {len(lost_tries)} jobs in hand; re-claimed"
            f" {min(reclaims.values()):.1f} to {max(reclaims.values()):.1f} s after the loss"
            f"\n  enqueue to finish: median {median:.2f} s, p99 {p99:.2f} s,"
            f" max {ordered[-1]:.2f} s; of the lost node's jobs max {max(waits[pk] for pk in reclaims):.2f} s"
            f"\n  sent again: {len(resent)} jobs, {len(resent - set(reclaims))} of them never begun on the lost node"
            f"\n  evaluate-node4 ready {fourth_ready:.1f} s after the loss, took {fourth_took} jobs"
            f"\n  bound: STALE_JOB_AFTER {STALE_JOB_AFTER} + SWEEP_INTERVAL {SWEEP_INTERVAL} + {MARGIN:g} = {bound:g} s"
        )
        assert max(reclaims.values()) <= bound, reclaims
        late = {pk: wait for pk, wait in waits.items() if wait > bound}
        assert not late, f"jobs that waited past {bound:g} s: {late}"
        assert fourth_took > 0
