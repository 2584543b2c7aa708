"""The dead-letter console over REST: letters grouped by error class and by question, a dry run
that shares the replay's decisions and writes nothing, bulk replay behind an explicit confirm,
and an audit row for every replay."""

import dataclasses

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import override_settings
from rest_framework.test import APIClient

from attempts.models import Submission, SubmissionStatus
from evaluation.jobs import dead_letter_replay, job_run
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob
from tests.factories import AttemptFactory, UserFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db


def _dead_letter(attempt=None, answer="score=5") -> DeadLetter:
    attempt = attempt or AttemptFactory()
    _, job_id = submit_via_service(attempt, answer)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
        assert job_run(job_id=job_id, worker="test") == "dead"
    return DeadLetter.objects.get(job_id=job_id)


def _staff(*, can_replay: bool = True):
    user = UserFactory(is_staff=True)
    if can_replay:
        user.user_permissions.add(Permission.objects.get(codename="replay_deadletter"))
    client = APIClient()
    client.force_authenticate(user)
    return client, user


def _database() -> dict[str, list]:
    """Every row of every table the project's models (and their m2m tables) know, by table."""
    tables = {}
    for model in apps.get_models(include_auto_created=True):
        tables[model._meta.db_table] = list(model._default_manager.order_by("pk").values())
    return tables


def test_a_letter_names_its_error_class_and_question():
    letter = _dead_letter()
    assert letter.error_class == "PermanentJobError"
    assert letter.context["question"] == Submission.objects.get(pk=letter.subject_id).attempt.question.slug


def test_groups_by_error_class_and_by_question_count_newest_first_and_filter():
    first = _dead_letter()
    second = _dead_letter()
    third = _dead_letter(attempt=AttemptFactory(question=Submission.objects.get(pk=second.subject_id).attempt.question))
    client, _ = _staff()
    by_class = client.get("/api/v1/ops/dead-letters/groups/").json()
    assert by_class["by"] == "error_class"
    assert [(g["key"], g["count"], g["waiting"]) for g in by_class["groups"]] == [("PermanentJobError", 3, 3)]
    by_question = client.get("/api/v1/ops/dead-letters/groups/?by=question").json()["groups"]
    question_of = {letter.pk: letter.context["question"] for letter in (first, second, third)}
    assert [(g["key"], g["count"]) for g in by_question] == [(question_of[third.pk], 2), (question_of[first.pk], 1)]
    filtered = client.get(f"/api/v1/ops/dead-letters/?question={question_of[first.pk]}").json()
    assert [row["id"] for row in filtered["results"]] == [first.pk]
    assert filtered["results"][0]["error_class"] == "PermanentJobError"
    client.post(f"/api/v1/ops/dead-letters/{first.pk}/replay/")
    waiting = client.get("/api/v1/ops/dead-letters/groups/?by=question&replayed=false").json()["groups"]
    assert [(g["key"], g["count"]) for g in waiting] == [(question_of[third.pk], 2)]


def test_a_dry_run_says_what_a_replay_would_do_and_changes_nothing():
    current = _dead_letter()
    superseded = _dead_letter()
    submit_via_service(Submission.objects.get(pk=superseded.subject_id).attempt, "score=6")
    client, user = _staff(can_replay=False)
    before = _database()

    single = client.post(f"/api/v1/ops/dead-letters/{current.pk}/replay/?dry_run=1")
    bulk = client.post("/api/v1/ops/dead-letters/replay/", {"ids": [current.pk, superseded.pk]}, format="json")

    assert _database() == before
    assert single.status_code == 200
    assert single.json() | {"detail": None} == {
        "dead_letter_id": current.pk,
        "job_id": None,
        "replayed": False,
        "action": "requeue",
        "current": True,
        "dry_run": True,
        "detail": None,
    }
    assert bulk.status_code == 200, "without confirm a bulk call is a dry run"
    body = bulk.json()
    assert (body["dry_run"], body["requeued"], body["skipped"]) == (True, 1, 1)
    skipped = body["results"][1]
    assert (skipped["action"], skipped["current"], skipped["detail"]) == (
        "skip",
        False,
        "superseded by a newer submission",
    )


def test_the_dry_run_is_the_replay_stopped_before_it_writes():
    letter = _dead_letter()
    dry = dead_letter_replay(dead_letter_id=letter.pk, user=None, dry_run=True)
    real = dead_letter_replay(dead_letter_id=letter.pk, user=None)
    assert (dry.action, dry.current, dry.detail) == (real.action, real.current, real.detail)
    assert real.replayed and real.job_id is not None


def test_bulk_replay_twice_makes_each_job_once_and_audits_every_replay():
    current, other = _dead_letter(), _dead_letter()
    superseded = _dead_letter()
    submit_via_service(Submission.objects.get(pk=superseded.subject_id).attempt, "score=6")
    client, user = _staff()
    ids = [current.pk, other.pk, superseded.pk]

    first = client.post("/api/v1/ops/dead-letters/replay/", {"ids": ids, "confirm": True}, format="json")
    second = client.post("/api/v1/ops/dead-letters/replay/", {"ids": ids, "confirm": True}, format="json")

    assert (first.status_code, second.status_code) == (202, 202)
    assert (first.json()["requeued"], first.json()["skipped"]) == (2, 1)
    assert (second.json()["requeued"], second.json()["skipped"]) == (0, 3)
    for letter in (current, other):
        assert EvaluationJob.objects.filter(replay_of=letter).count() == 1
        assert Submission.objects.get(pk=letter.subject_id).status == SubmissionStatus.QUEUED
    assert not EvaluationJob.objects.filter(replay_of=superseded).exists()
    audit = [(row.dead_letter_id, row.outcome, row.reason) for row in DeadLetterReplay.objects.order_by("id")]
    assert audit == [
        (current.pk, "requeued", ""),
        (other.pk, "requeued", ""),
        (superseded.pk, "skipped", "superseded by a newer submission"),
        *[(pk, "skipped", "already replayed") for pk in sorted(ids)],
    ]
    assert set(DeadLetterReplay.objects.values_list("user", flat=True)) == {user.pk}
    made = DeadLetterReplay.objects.get(dead_letter=current, outcome="requeued")
    assert made.job == EvaluationJob.objects.get(replay_of=current)


def test_replaying_needs_the_permission_and_every_id_to_exist():
    letter = _dead_letter()
    client, _ = _staff(can_replay=False)
    refused = client.post("/api/v1/ops/dead-letters/replay/", {"ids": [letter.pk], "confirm": True}, format="json")
    assert refused.status_code == 403
    client, _ = _staff()
    missing = client.post(
        "/api/v1/ops/dead-letters/replay/", {"ids": [letter.pk, 999999], "confirm": True}, format="json"
    )
    assert missing.status_code == 404 and missing.json()["missing"] == [999999]
    assert not DeadLetterReplay.objects.exists() and not EvaluationJob.objects.filter(replay_of=letter).exists()
    too_many = client.post(
        "/api/v1/ops/dead-letters/replay/", {"ids": list(range(1, 502)), "confirm": True}, format="json"
    )
    assert too_many.status_code == 400
