"""GET /healthz checks the database, Redis and the broker for real."""

import pytest
from django.test import override_settings

from tests.processes import free_port


@pytest.mark.django_db
def test_every_check_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"] == {"database": "ok", "redis": "ok", "broker": "ok"}
    assert "sandbox" in body


@pytest.mark.django_db
def test_each_languages_toolchain_is_shown_and_a_missing_one_fails_nothing(client, monkeypatch):
    import evaluation.languages

    versions = evaluation.languages.language_versions()
    monkeypatch.setitem(versions, "python", "3.11.2")
    monkeypatch.setitem(versions, "go", None)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert list(body["languages"]) == ["python", "javascript", "java", "cpp", "go"]
    assert (body["languages"]["python"], body["languages"]["go"]) == ("3.11.2", None)
    assert body["status"] == "ok" and "failed" not in body


@pytest.mark.django_db
def test_a_dead_broker_is_named_with_503(client):
    with override_settings(CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0"):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["broker"]
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("error")


@pytest.mark.django_db
def test_a_dead_redis_is_named_with_503(client, settings):
    caches = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}}
    with override_settings(CACHES=caches):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["redis"]


@pytest.mark.django_db
def test_every_request_gets_an_id_and_a_log_line(client, caplog):
    with caplog.at_level("INFO", logger="interviewprep.request"):
        response = client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")
    assert response["X-Request-ID"] == "abc-123"
    record = next(r for r in caplog.records if r.name == "interviewprep.request")
    assert record.request_id == "abc-123"
    assert record.path == "/healthz" and record.status == 200


@pytest.mark.django_db
def test_openapi_schema_and_docs_are_served_without_a_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/attempts/{attempt_id}/submissions/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower() and "unpkg" not in html.lower() and "jsdelivr" not in html.lower()
    asset = next(part.split('"')[0] for part in html.split('src="')[1:] if "swagger-ui" in part)
    assert client.get(asset).status_code == 200


@pytest.mark.django_db
def test_unknown_api_path_is_a_problem_document(client):
    response = client.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
