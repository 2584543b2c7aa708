"""The last outcome of a check that runs on a timer, kept so that /metrics can export it and an
alert can fire on it (the invariants: attempts' `check_invariants`, by command or beat task)."""

from __future__ import annotations

from django.utils import timezone

from evaluation.models import CheckOutcome


def check_outcome_record(*, name: str, failures: int, detail: str = "") -> CheckOutcome:
    outcome, _ = CheckOutcome.objects.update_or_create(
        name=name, defaults={"checked_at": timezone.now(), "failures": failures, "detail": detail[:2000]}
    )
    return outcome


def check_outcome_get(*, name: str) -> CheckOutcome | None:
    return CheckOutcome.objects.filter(name=name).first()
