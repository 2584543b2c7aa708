"""Idempotency keys (after the IETF httpapi draft and Stripe), enforced by the database.

The edge (an API view, a form view) wraps a service call in `idempotent`, which stores the
response the edge rendered and replays it for every repeat. The record is inserted in the
same transaction as the work it guards, with `INSERT .. ON CONFLICT DO NOTHING`: a second
request with the same key blocks on that insert until the first commits (then replays its
stored answer) or rolls back (then does the work itself). So identical requests arriving at
the same moment make one submission, and a refused request (404, 413, 503...) leaves no
record behind.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from attempts.models import IdempotencyRecord
from interviewprep.errors import IdempotencyKeyReused, InvalidInput
from interviewprep.purge import purge_in_batches

_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


@dataclass(frozen=True)
class StoredResponse:
    status_code: int
    body: bytes
    replayed: bool


def idempotency_key_validate(key: str | None) -> str:
    if key is None or key == "":
        raise InvalidInput(
            "This request needs an Idempotency-Key header (1 to 255 printable characters), "
            "so that retrying it can never submit twice.",
            code_detail="idempotency-key-missing",
        )
    if not _KEY.match(key):
        raise InvalidInput(
            "The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.",
            code_detail="idempotency-key-malformed",
        )
    return key


def request_fingerprint(*, method: str, path: str, data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # "surrogatepass": bytes for any str JSON can decode (a lone "\ud800" too), and the very
    # bytes of plain UTF-8 for valid text, so fingerprints stored before still match.
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode("utf-8", "surrogatepass")).hexdigest()


def render_body(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def idempotency_expires_at(now):
    return now + timedelta(hours=settings.CONFIG.idempotency_ttl_hours)


def _claim_key(*, user_id: int, key: str, fingerprint: str, now) -> bool:
    """Insert the record; False when one exists (after waiting for its transaction to end)."""
    expires_at = idempotency_expires_at(now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {IdempotencyRecord._meta.db_table}
                (user_id, key, fingerprint, created_at, expires_at)
            VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (user_id, key) DO NOTHING
            RETURNING id
            """,  # noqa: S608 - the table name is ours, every value is a parameter
            [user_id, key, fingerprint, now, expires_at],
        )
        return cursor.fetchone() is not None


def _replay(fingerprint: str, stored_fingerprint: str, status_code: int, body) -> StoredResponse:
    if stored_fingerprint != fingerprint:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for a different request. Use a new key for a new request."
        )
    return StoredResponse(status_code, bytes(body), replayed=True)


def idempotent(
    *,
    user_id: int,
    key: str,
    fingerprint: str,
    work: Callable[[], tuple[int, bytes]],
) -> StoredResponse:
    """Run `work` once per (user, key) and answer every repeat with its first answer.

    `work` runs inside this transaction and returns (status code, response body); raising a
    DomainError from it rolls everything back, the key included.
    """
    now = timezone.now()
    # A finished record answers without a transaction or a lock: replays are the common retry
    # and must cost a read, not a write.
    done = (
        IdempotencyRecord.objects.filter(user_id=user_id, key=key, status_code__isnull=False, expires_at__gt=now)
        .values_list("fingerprint", "status_code", "response_body")
        .first()
    )
    if done is not None:
        return _replay(fingerprint, *done)
    with transaction.atomic():
        if not _claim_key(user_id=user_id, key=key, fingerprint=fingerprint, now=now):
            record = IdempotencyRecord.objects.select_for_update().get(user_id=user_id, key=key)
            if record.expires_at > now:
                return _replay(fingerprint, record.fingerprint, record.status_code, record.response_body)
            # Expired but not yet purged: the key is free again.
            record.delete()
            _claim_key(user_id=user_id, key=key, fingerprint=fingerprint, now=now)
        status_code, body = work()
        IdempotencyRecord.objects.filter(user_id=user_id, key=key).update(status_code=status_code, response_body=body)
    return StoredResponse(status_code, body, replayed=False)


def idempotency_records_purge(*, now=None) -> int:
    """Delete the keys past their expiry (IDEMPOTENCY_TTL_HOURS), in the purge helper's
    batches; a periodic task calls this. An expired key is free again already (above)."""
    now = now or timezone.now()
    return purge_in_batches(IdempotencyRecord.objects.filter(expires_at__lte=now))
