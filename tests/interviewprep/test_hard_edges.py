"""Inputs probed from outside: none of them may answer 5xx, and each refusal has one problem type."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.test import Client

from attempts.models import Attempt, Submission
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

BEYOND_BIGINT = "99999999999999999999"
PROBLEM = "https://interviewprep.dev/problems/"


def _post(client, path: str, body, **headers):
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.generic("POST", path, raw, content_type="application/json", **headers)


def _type(response) -> str:
    assert response["Content-Type"] == "application/problem+json", response.content
    return response.json()["type"]


# 1. Ids beyond PostgreSQL's bigint are simply not found.


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"/api/v1/attempts/{BEYOND_BIGINT}/submissions/"),
        ("GET", f"/api/v1/attempts/{BEYOND_BIGINT}/"),
        ("GET", f"/api/v1/attempts/{BEYOND_BIGINT}/submissions/"),
        ("POST", f"/api/v1/attempts/{BEYOND_BIGINT}/runs/"),
        ("GET", f"/api/v1/attempts/{BEYOND_BIGINT}/draft/"),
        ("GET", f"/api/v1/questions/{BEYOND_BIGINT}/"),
        ("GET", f"/api/v1/submissions/{BEYOND_BIGINT}/"),
        ("GET", f"/api/v1/runs/{BEYOND_BIGINT}/"),
        ("GET", f"/api/v1/practice-requests/{BEYOND_BIGINT}/"),
        ("GET", "/api/v1/attempts/9223372036854775808/"),
        ("GET", "/api/v1/attempts/0/"),
    ],
)
def test_an_id_outside_1_to_2_63_is_a_not_found_problem(api_client_for, method, path):
    client = api_client_for(UserFactory())
    response = client.generic(
        method, path, json.dumps({"answer": "x"}), content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 404
    assert _type(response) == PROBLEM + "not-found"


@pytest.mark.django_db
def test_the_largest_bigint_id_reaches_the_view_and_is_not_found(api_client_for):
    response = api_client_for(UserFactory()).get("/api/v1/attempts/9223372036854775807/")
    assert response.status_code == 404
    assert response.json()["detail"] == "There is no attempt 9223372036854775807."


@pytest.mark.django_db
def test_staff_routes_refuse_a_huge_id_as_not_found(api_client_for):
    client = api_client_for(UserFactory(is_staff=True, is_superuser=True))
    for method, path in [
        ("GET", f"/api/v1/ops/attempts/{BEYOND_BIGINT}/cache-diff/"),
        ("POST", f"/api/v1/ops/dead-letters/{BEYOND_BIGINT}/replay/"),
    ]:
        response = client.generic(method, path)
        assert response.status_code == 404, path
        assert _type(response) == PROBLEM + "not-found"


@pytest.mark.django_db
def test_web_pages_answer_a_huge_id_with_the_not_found_page():
    user = UserFactory()
    client = Client()
    client.force_login(user)
    for path in [f"/attempts/{BEYOND_BIGINT}/", f"/questions/{BEYOND_BIGINT}/", f"/practice/{BEYOND_BIGINT}/"]:
        assert client.get(path).status_code == 404, path
    response = client.post(f"/attempts/{BEYOND_BIGINT}/", {"answer": "x", "idempotency_key": "k1"})
    assert response.status_code == 404
    assert "html" in response["Content-Type"]


@pytest.mark.django_db
def test_a_question_id_beyond_bigint_in_a_body_is_a_validation_problem(api_client_for):
    client = api_client_for(UserFactory())
    response = _post(client, "/api/v1/attempts/", f'{{"question_id": {BEYOND_BIGINT}}}')
    assert response.status_code == 400
    assert "question_id" in response.json()["errors"]
    assert not Attempt.objects.exists()


# 2. Lone surrogates.


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        '{"answer": "ok", "extra": "\\ud800"}',
        '{"answer": "ok \\udfff"}',
        '{"answer": "ok", "\\ud800": 1}',
    ],
)
def test_a_lone_surrogate_anywhere_in_a_submit_is_refused_and_writes_nothing(api_client_for, body):
    attempt = AttemptFactory()
    response = _post(
        api_client_for(attempt.user), f"/api/v1/attempts/{attempt.pk}/submissions/", body, HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 400
    assert _type(response) == PROBLEM + "invalid"
    assert "invalid characters" in response.json()["detail"]
    assert not Submission.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/api/v1/attempts/{attempt}/draft/", '{"answer": "\\ud800"}'),
        ("POST", "/api/v1/attempts/{attempt}/runs/", '{"answer": "\\ud800"}'),
        ("POST", "/api/v1/attempts/{attempt}/runs/", '{"answer": "x", "inputs": [["\\ud800"]]}'),
        ("POST", "/api/v1/practice-requests/", '{"topic": "\\ud800"}'),
        ("POST", "/api/v1/auth/register/", '{"username": "a\\ud800", "password": "a long passphrase"}'),
    ],
)
def test_a_lone_surrogate_in_any_stored_field_is_refused_with_400(api_client_for, method, path, body):
    attempt = AttemptFactory()
    response = api_client_for(attempt.user).generic(
        method, path.format(attempt=attempt.pk), body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 400
    assert "invalid characters" in response.json()["detail"]


def test_the_fingerprint_hashes_every_string_json_can_carry():
    from attempts.services.idempotency import request_fingerprint

    one = request_fingerprint(method="POST", path="/p", data={"x": "\ud800"})
    assert one != request_fingerprint(method="POST", path="/p", data={"x": "\udc00"})
    # Valid text keeps the fingerprint it always had, so keys stored before still replay.
    expected = hashlib.sha256('POST /p\n{"x":"é"}'.encode()).hexdigest()
    assert request_fingerprint(method="POST", path="/p", data={"x": "é"}) == expected


# 3. Deep nesting.


@pytest.mark.django_db
@pytest.mark.parametrize("body", ["[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000, "[" * 100_000])
def test_json_nested_too_deep_is_a_400_even_unauthenticated(body):
    for path in ["/api/v1/auth/register/", "/api/v1/auth/token/"]:
        response = _post(Client(), path, body)
        assert response.status_code == 400, path
        assert _type(response) == PROBLEM + "invalid"
        assert response.json()["detail"].endswith("JSON nested deeper than 64 levels.")


@pytest.mark.django_db
def test_json_64_levels_deep_still_parses(api_client_for):
    attempt = AttemptFactory()
    body = '{"answer": "x", "extra": ' + "[" * 63 + "]" * 63 + "}"
    response = _post(
        api_client_for(attempt.user), f"/api/v1/attempts/{attempt.pk}/submissions/", body, HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 202, response.content


@pytest.mark.django_db
def test_brackets_inside_strings_do_not_count_as_nesting(api_client_for):
    attempt = AttemptFactory()
    body = json.dumps({"answer": "[" * 5000 + '\\"{' * 100})
    response = _post(
        api_client_for(attempt.user), f"/api/v1/attempts/{attempt.pk}/submissions/", body, HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 202, response.content


def test_the_api_parses_json_with_one_parser():
    from django.conf import settings

    assert settings.REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] == ["interviewprep.parsers.BoundedJSONParser"]


# 5. Pagination parameters.


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
        ("page=", "page"),
        (f"page={BEYOND_BIGINT}", None),
        ("page_size=0", "page_size"),
        ("page_size=-5", "page_size"),
        ("page_size=x", "page_size"),
        ("page_size=201", "page_size"),
    ],
)
def test_a_bad_page_or_page_size_is_a_400_naming_it(api_client_for, query, name):
    QuestionFactory()
    response = api_client_for(UserFactory()).get(f"/api/v1/questions/?{query}")
    if name is None:  # a well-formed page past the end
        assert response.status_code == 404
        assert _type(response) == PROBLEM + "not-found"
        return
    assert response.status_code == 400, response.content
    assert _type(response) == PROBLEM + "invalid"
    assert name in response.json()["errors"]


@pytest.mark.django_db
def test_good_pages_and_the_last_page_still_answer(api_client_for):
    QuestionFactory.create_batch(3)
    client = api_client_for(UserFactory())
    assert client.get("/api/v1/questions/?page=2&page_size=2").json()["count"] == 3
    assert client.get("/api/v1/questions/?page=last&page_size=200").status_code == 200
    assert client.get("/api/v1/questions/?page=3&page_size=2").status_code == 404


# 6. One problem type per kind of error.


@pytest.mark.django_db
def test_every_not_found_is_the_same_problem_type(api_client_for):
    mine, theirs = AttemptFactory(), AttemptFactory()
    client = api_client_for(mine.user)
    answers = [
        client.get("/api/v1/no-such-thing/"),
        client.get(f"/api/v1/attempts/{theirs.pk}/"),
        client.get("/api/v1/attempts/2147483647/"),
        client.get("/api/v1/questions/?page=99"),
        client.get("/api/v1/attempts/abc/"),
    ]
    for response in answers:
        assert response.status_code == 404
        assert _type(response) == PROBLEM + "not-found"
        assert response.json()["title"] == "Not found"


@pytest.mark.django_db
def test_each_status_has_one_problem_type(api_client_for):
    user = UserFactory()
    client = api_client_for(user)
    cases = {
        401: [
            Client().get("/api/v1/attempts/"),
            _post(Client(HTTP_AUTHORIZATION="Token nope"), "/api/v1/attempts/", {}),
        ],
        403: [client.get("/api/v1/ops/dead-letters/")],
        405: [client.delete("/api/v1/questions/")],
        415: [client.post("/api/v1/attempts/", "a=1", content_type="application/x-www-form-urlencoded")],
        400: [_post(client, "/api/v1/attempts/", "{"), _post(client, "/api/v1/attempts/", {"question_id": "x"})],
        413: [_post(client, "/api/v1/auth/token/", {"username": "u", "password": "p" * 300_000})],
    }
    expected = {
        400: "invalid",
        401: "not-authenticated",
        403: "permission-denied",
        405: "method-not-allowed",
        413: "content-too-large",
        415: "unsupported-media-type",
    }
    for status, responses in cases.items():
        for response in responses:
            assert response.status_code == status, response.content
            assert _type(response) == PROBLEM + expected[status]


# 7. The body-size refusal names the limit that applied.


@pytest.mark.django_db
def test_a_body_over_the_limit_names_the_body_limit_on_any_endpoint():
    body = json.dumps({"username": "u", "password": "p" * 300_000})
    response = _post(Client(), "/api/v1/auth/token/", body)
    assert response.status_code == 413
    problem = response.json()
    assert problem["detail"] == (
        f"The request body is {len(body)} bytes; this endpoint accepts at most {256 * 1024} bytes."
    )
    assert problem["limit"] == 256 * 1024
    assert "answer" not in problem["detail"]


@pytest.mark.django_db
def test_an_answer_over_64_kib_keeps_its_answer_wording(api_client_for):
    attempt = AttemptFactory()
    response = _post(
        api_client_for(attempt.user),
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": "y" * (64 * 1024 + 1)},
        HTTP_IDEMPOTENCY_KEY="k1",
    )
    assert response.status_code == 413
    assert _type(response) == PROBLEM + "content-too-large"
    assert "answer" in response.json()["detail"].lower()
    assert response.json()["limit"] == 64 * 1024
