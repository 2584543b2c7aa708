import re
from pathlib import Path

import pytest
from django.core.management import call_command

from attempts.models import Result
from attempts.services.attempts import submission_create
from attempts.services.invariants import CHECKS
from evaluation.models import EvaluationJob
from tests.factories import AttemptFactory


def _submit(attempt):
    submission_create(user=attempt.user, attempt_id=attempt.pk, answer="a")


@pytest.mark.django_db
def test_healthy_data_passes(capsys):
    _submit(AttemptFactory())
    call_command("check_invariants")
    assert "all invariants hold" in capsys.readouterr().out


@pytest.mark.django_db
def test_broken_promises_are_named_with_their_rows_and_exit_non_zero(capsys):
    attempt = AttemptFactory()
    _submit(attempt)
    _submit(attempt)
    attempt.refresh_from_db()
    older = attempt.submissions.exclude(pk=attempt.latest_submission_id).get()
    Result.objects.create(submission=older, score=1, max_score=1)  # a result for a superseded one
    EvaluationJob.objects.filter(kind="evaluate", subject_id=attempt.latest_submission_id).delete()  # a lost job
    with pytest.raises(SystemExit) as exit_info:
        call_command("check_invariants", outbox_bound=3600)
    assert exit_info.value.code == 1
    out = capsys.readouterr().out
    assert "BROKEN result_only_for_latest_or_older" in out
    assert f'"submission_id": {older.pk}' in out
    assert "BROKEN submission_has_job" in out
    assert f'"submission_id": {attempt.latest_submission_id}' in out


@pytest.mark.nodb
def test_every_check_the_command_runs_is_listed_in_the_promises():
    promises = (Path(__file__).resolve().parents[2] / "docs" / "promises.md").read_text()
    section = promises[promises.index("## 10. ") : promises.index("## 11. ")]
    assert set(re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)) == {name for name, _, _ in CHECKS}
