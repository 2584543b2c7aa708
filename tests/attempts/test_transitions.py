"""Every illegal transition is refused, counted and leaves the row as it was."""

import itertools

import pytest
from django.db import transaction

from attempts.models import (
    Attempt,
    AttemptStatus,
    PracticeRequest,
    PracticeRequestStatus,
    Run,
    RunStatus,
    StateChange,
    Submission,
    SubmissionStatus,
)
from attempts.services.transitions import is_legal, transition_locked
from interviewprep.errors import IllegalTransition
from tests.factories import AttemptFactory, UserFactory
from tests.metrics_helpers import counter_value


def _make(model, status):
    if model is Attempt:
        return AttemptFactory(status=status)
    if model is Submission:
        return Submission.objects.create(attempt=AttemptFactory(), answer="x", status=status)
    if model is Run:
        attempt = AttemptFactory()
        return Run.objects.create(user=attempt.user, attempt=attempt, answer="x", status=status)
    return PracticeRequest.objects.create(user=UserFactory(), status=status)


STATUSES = {
    Attempt: AttemptStatus,
    Submission: SubmissionStatus,
    PracticeRequest: PracticeRequestStatus,
    Run: RunStatus,
}
# Written out by hand from docs/api.md ("States and versions"), never read from the code's
# tables, so a wrong entry there fails here. A dead-lettered job fails its work from queued too.
_QUEUED_WORK = {
    ("queued", "processing"),
    ("queued", "failed"),
    ("processing", "completed"),
    ("processing", "failed"),
    ("failed", "queued"),
}
MOVES = {
    Attempt: {
        ("draft", "queued"),
        ("queued", "queued"),  # a newer submission
        ("queued", "processing"),
        ("queued", "failed"),
        ("processing", "queued"),
        ("processing", "completed"),
        ("processing", "failed"),
        ("completed", "queued"),
        ("failed", "queued"),
    },
    Submission: {
        ("queued", "processing"),
        ("queued", "superseded"),
        ("queued", "failed"),
        ("processing", "completed"),
        ("processing", "superseded"),
        ("processing", "failed"),
        ("failed", "queued"),
    },
    PracticeRequest: _QUEUED_WORK,
    Run: _QUEUED_WORK,
}
ILLEGAL = [
    (model, source, target)
    for model, choices in STATUSES.items()
    for source, target in itertools.product(choices.values, repeat=2)
    if source != target and (source, target) not in MOVES[model]
]
LEGAL = [
    (model, source, target) for model, moves in MOVES.items() for source, target in sorted(moves) if source != target
]


@pytest.mark.parametrize("model", list(STATUSES), ids=lambda model: model.__name__)
def test_the_code_allows_exactly_the_documented_moves(model):
    allowed = {
        (source, target)
        for source, target in itertools.product(STATUSES[model].values, repeat=2)
        if is_legal(model, source, target)
    }
    assert allowed == MOVES[model]


@pytest.mark.django_db
@pytest.mark.parametrize(("model", "source", "target"), ILLEGAL, ids=lambda v: getattr(v, "__name__", v))
def test_illegal_transition_is_refused_and_leaves_the_row_as_it_was(model, source, target):
    obj = _make(model, source)
    before = model.objects.filter(pk=obj.pk).values().get()
    counted = counter_value(
        "interviewprep_invalid_transitions_total",
        {"entity": obj._meta.model_name.replace("practicerequest", "practice_request"), "from": source, "to": target},
    )
    with pytest.raises(IllegalTransition):
        with transaction.atomic():
            transition_locked(model, obj.pk, target, actor="test")
    assert model.objects.filter(pk=obj.pk).values().get() == before
    assert not StateChange.objects.filter(object_id=obj.pk, to_status=target).exists()
    after = counter_value(
        "interviewprep_invalid_transitions_total",
        {"entity": obj._meta.model_name.replace("practicerequest", "practice_request"), "from": source, "to": target},
    )
    assert after == counted + 1


@pytest.mark.django_db
@pytest.mark.parametrize(("model", "source", "target"), LEGAL, ids=lambda v: getattr(v, "__name__", v))
def test_legal_transition_moves_records_and_bumps_the_attempt_version(model, source, target):
    obj = _make(model, source)
    version = getattr(obj, "version", None)
    assert transition_locked(model, obj.pk, target, actor="test", reason="because") is True
    obj.refresh_from_db()
    assert obj.status == target
    change = StateChange.objects.get(object_id=obj.pk, to_status=target)
    assert (change.from_status, change.actor, change.reason) == (source, "test", "because")
    if version is not None:
        assert obj.version == version + 1


@pytest.mark.django_db
def test_moving_to_the_current_state_changes_nothing():
    attempt = AttemptFactory(status=AttemptStatus.PROCESSING)
    assert transition_locked(Attempt, attempt.pk, AttemptStatus.PROCESSING, actor="test") is False
    attempt.refresh_from_db()
    assert attempt.version == 1
    assert not StateChange.objects.exists()
