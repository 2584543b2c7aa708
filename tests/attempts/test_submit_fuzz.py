"""Property: whatever is thrown at the submit endpoint, never a 5xx, never a row for a refusal."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attempts.models import IdempotencyRecord, Submission
from evaluation.models import EvaluationJob
from tests.factories import AttemptFactory

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=8,
)
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["answer", "answers", "x"]), json_values, max_size=3).map(
        lambda v: json.dumps(v).encode()
    ),
    st.integers(min_value=0, max_value=70_000).map(lambda n: json.dumps({"answer": "y" * n}).encode()),
)
keys = st.one_of(
    st.none(),
    st.text(max_size=300),
    st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=255),
)


@pytest.mark.django_db
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, key=keys, attempt_offset=st.sampled_from([0, 0, 0, 1, 10_000]))
def test_submit_never_fails_with_5xx_and_refusals_write_nothing(api_client_for, body, key, attempt_offset):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    before = (Submission.objects.count(), IdempotencyRecord.objects.count(), EvaluationJob.objects.count())
    headers = {}
    if key is not None:
        if any(ord(c) < 32 or ord(c) > 126 for c in key):
            key = key.encode("utf-8", "surrogatepass").decode("latin-1", "replace")
        headers["HTTP_IDEMPOTENCY_KEY"] = key
    response = client.generic(
        "POST",
        f"/api/v1/attempts/{attempt.pk + attempt_offset}/submissions/",
        body,
        content_type="application/json",
        **headers,
    )
    assert response.status_code < 500, response.content
    after = (Submission.objects.count(), IdempotencyRecord.objects.count(), EvaluationJob.objects.count())
    if response.status_code == 202:
        assert after == (before[0] + 1, before[1] + 1, before[2] + 1)
    else:
        assert response.status_code in (400, 404, 413, 415, 422)
        assert response["Content-Type"] == "application/problem+json"
        assert after == before
