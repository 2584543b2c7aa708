from datetime import timedelta

import pytest
from django.utils import timezone

from attempts.models import IdempotencyRecord
from attempts.tasks import purge_idempotency_keys
from tests.factories import AttemptFactory


@pytest.mark.django_db
def test_keys_live_72_hours_by_default_and_expired_ones_are_purged(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    for key in ("old", "fresh"):
        client.post(
            f"/api/v1/attempts/{attempt.pk}/submissions/", {"answer": key}, format="json", HTTP_IDEMPOTENCY_KEY=key
        )
    fresh = IdempotencyRecord.objects.get(key="fresh")
    assert fresh.expires_at - fresh.created_at == timedelta(hours=72)
    IdempotencyRecord.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert purge_idempotency_keys() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["fresh"]


@pytest.mark.django_db
def test_an_expired_key_not_yet_purged_is_free_again(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    url = f"/api/v1/attempts/{attempt.pk}/submissions/"
    first = client.post(url, {"answer": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    again = client.post(url, {"answer": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert again.status_code == 202
    assert again.json()["submission_id"] != first.json()["submission_id"]
