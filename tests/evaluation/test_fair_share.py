"""Fair share: one user's flood cannot put itself ahead of everyone else. The relay publishes at
most JOBS_IN_FLIGHT_PER_USER of a user's jobs of one kind at a time; the rest wait in the outbox,
and another user's job goes to the broker at once."""

import os
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from attempts.services.invariants import invariants_check
from attempts.services.practice import practice_request_create
from attempts.services.runs import run_create
from evaluation.jobs import job_run
from evaluation.jobs.claim import job_claim
from evaluation.jobs.outbox import outbox_add, outbox_publish
from evaluation.models import EvaluationJob, JobStatus, Outbox
from evaluation.sandbox import run_python
from interviewprep.courtesy import COURTEOUS_NICENESS, courtesy
from tests.factories import AttemptFactory, CodingQuestionFactory, UserFactory
from tests.helpers import submit_via_service
from tests.processes import start_relay, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _flood(user, count: int) -> list[int]:
    """`count` submits by `user`, each on an attempt of its own (none supersedes another)."""
    return [submit_via_service(AttemptFactory(user=user), f"score={60 + i % 40}")[1] for i in range(count)]


def _statuses(job_ids: list[int]) -> list[str]:
    return list(EvaluationJob.objects.filter(pk__in=job_ids).order_by("id").values_list("status", flat=True))


def test_a_flood_is_published_a_few_at_a_time_and_another_user_goes_at_once():
    in_flight = settings.CONFIG.jobs_in_flight_per_user
    flooder = UserFactory()
    flood = _flood(flooder, in_flight + 4)
    [other] = _flood(UserFactory(), 1)

    outbox_publish()
    assert _statuses(flood) == [JobStatus.QUEUED] * in_flight + [JobStatus.PENDING] * 4
    assert _statuses([other]) == [JobStatus.QUEUED]
    # Nothing more goes while the first ones are in flight.
    assert outbox_publish() == 0

    # One of the flood finishes: exactly one more of it goes.
    first = EvaluationJob.objects.get(pk=flood[0])
    assert job_run(job_id=first.pk, worker="w:1", kind=first.kind, subject_id=first.subject_id) == "succeeded"
    assert outbox_publish() == 1
    assert _statuses(flood) == [JobStatus.SUCCEEDED] + [JobStatus.QUEUED] * in_flight + [JobStatus.PENDING] * 3


def test_each_kind_has_its_own_share():
    # A flood of submits does not hold back the same user's other work (a Run, a practice request).
    in_flight = settings.CONFIG.jobs_in_flight_per_user
    user = UserFactory()
    flood = _flood(user, in_flight + 2)
    request = practice_request_create(user=user)
    outbox_publish()
    assert _statuses(flood).count(JobStatus.QUEUED) == in_flight
    assert EvaluationJob.objects.get(kind="generate", subject_id=request.pk).status == JobStatus.QUEUED


def test_work_without_an_owner_is_not_held():
    # Jobs no user asked for (a bulk load, a regrade) name no share and are never held back.
    jobs = _flood(UserFactory(), 6)
    EvaluationJob.objects.filter(pk__in=jobs).update(share_key="")
    outbox_publish()
    assert _statuses(jobs) == [JobStatus.QUEUED] * 6


def test_a_held_flood_drains_through_real_processes_never_over_its_share(tmp_path):
    """A real relay and worker: every job of the flood finishes without any new commit waking the
    relay, and at no moment were more of the flooder's jobs in flight than its share."""
    in_flight = settings.CONFIG.jobs_in_flight_per_user
    flooder = UserFactory()
    relay = start_relay(tmp_path)
    worker = start_worker(tmp_path, concurrency=4)
    try:
        flood = _flood(flooder, 24)
        [other] = _flood(UserFactory(), 1)
        wait_for(
            lambda: _statuses(flood + [other]).count(JobStatus.SUCCEEDED) == 25,
            timeout=120,
            message="the flood and the other user's job to finish",
            process=relay,
        )
    finally:
        worker.stop()
        relay.stop()
    jobs = {j.pk: j for j in EvaluationJob.objects.filter(pk__in=flood)}
    published = dict(Outbox.objects.filter(job_id__in=flood).values_list("job_id", "published_at"))
    for job_id, sent_at in published.items():
        overlapping = [
            other_id
            for other_id, other_sent in published.items()
            if other_sent <= sent_at and (jobs[other_id].finished_at is None or jobs[other_id].finished_at > sent_at)
        ]
        assert len(overlapping) <= in_flight, f"job {job_id} published with {sorted(overlapping)} in flight"


def test_a_resent_message_is_never_held():
    # The sweeper re-sends a job whose message was lost: its job is in flight already, so holding
    # the re-send for room in its share could hold the share for ever.
    in_flight = settings.CONFIG.jobs_in_flight_per_user
    flood = _flood(UserFactory(), in_flight)
    outbox_publish()
    assert _statuses(flood) == [JobStatus.QUEUED] * in_flight
    with transaction.atomic():
        resent = [outbox_add(job=EvaluationJob.objects.get(pk=pk)).pk for pk in flood]
    assert outbox_publish() == in_flight
    assert not Outbox.objects.filter(pk__in=resent, published_at__isnull=True).exists()


def test_a_held_row_is_not_a_stuck_outbox_but_a_row_with_nothing_in_flight_is():
    in_flight = settings.CONFIG.jobs_in_flight_per_user
    flood = _flood(UserFactory(), in_flight + 1)
    outbox_publish()
    # Long past the bound: the held row waits its turn behind the share's jobs in flight.
    Outbox.objects.update(available_at=timezone.now() - timedelta(hours=1))
    assert "outbox_published_in_time" not in {v.check for v in invariants_check(outbox_bound_seconds=60)}
    # Nothing of its share in flight any more: a row still unpublished is the relay's failure.
    EvaluationJob.objects.filter(pk__in=flood[:in_flight]).update(status=JobStatus.SUCCEEDED)
    assert "outbox_published_in_time" in {v.check for v in invariants_check(outbox_bound_seconds=60)}


def _claim(job_id: int):
    job = EvaluationJob.objects.get(pk=job_id)
    return job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id)


def test_a_users_job_claimed_beside_another_of_theirs_running_is_courteous_and_anyone_elses_is_not():
    flooder = UserFactory()
    first, second = _flood(flooder, 2)
    coding = AttemptFactory(user=flooder, question=CodingQuestionFactory())
    run = run_create(user=flooder, attempt_id=coding.pk, answer="def add(a, b):\n    return a + b\n")
    run = EvaluationJob.objects.get(kind="run", subject_id=run.pk)
    [other] = _flood(UserFactory(), 1)

    assert not _claim(first).courteous  # nothing else of the flooder's runs
    assert _claim(second).courteous  # the first still runs
    assert _claim(run.pk).courteous  # of another kind, the same user's: counted too
    assert not _claim(other).courteous  # another user's work never waits on the flood's

    # Once the user's other jobs are over, their next job runs as anyone's does.
    EvaluationJob.objects.filter(pk__in=[first, second, run.pk]).update(status=JobStatus.SUCCEEDED)
    [later] = _flood(flooder, 1)
    assert not _claim(later).courteous


def test_a_courteous_try_runs_its_sandbox_niced_and_any_other_as_the_worker_runs():
    answer = "import os\ndef nice():\n    return os.getpriority(os.PRIO_PROCESS, 0)\n"

    def niceness() -> int:
        box = run_python(code=answer, function="nice", tests_args=[[]], cpu_limit_s=2, memory_limit_mb=64)
        assert box.tests[0] is not None and box.tests[0].status == "ok", (box.ended, box.tests, box.diagnostic)
        return box.tests[0].value

    own = os.getpriority(os.PRIO_PROCESS, 0)
    assert niceness() == own
    with courtesy(True):
        assert niceness() == min(19, own + COURTEOUS_NICENESS)
    with courtesy(False):
        assert niceness() == own
