"""Private notes: one per question and candidate, never another's, listed on /notes/."""

import pytest

from attempts.models import Note
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


def note_url(question) -> str:
    return f"/api/v1/questions/{question.pk}/note/"


def test_a_question_without_a_note_reads_as_empty(api_client_for):
    question = QuestionFactory()
    response = api_client_for(UserFactory()).get(note_url(question))
    assert response.status_code == 200
    assert response.json() == {"question_id": question.pk, "text": "", "updated_at": None}


def test_a_note_is_saved_whole_and_replaced(api_client_for):
    question = QuestionFactory()
    client = api_client_for(UserFactory())
    first = client.put(note_url(question), {"text": "Remember the cache stampede."}, format="json")
    assert first.status_code == 200
    assert first.json()["text"] == "Remember the cache stampede."
    client.put(note_url(question), {"text": "  Use single flight.\n"}, format="json")
    assert client.get(note_url(question)).json()["text"] == "  Use single flight.\n"
    assert Note.objects.count() == 1


def test_notes_are_private(api_client_for):
    question = QuestionFactory()
    api_client_for(UserFactory()).put(note_url(question), {"text": "Mine alone."}, format="json")
    assert api_client_for(UserFactory()).get(note_url(question)).json()["text"] == ""


@pytest.mark.parametrize("body", [{"text": 42}, {"text": "x" * 10_001}, {}])
def test_a_bad_note_is_refused_and_keeps_the_old_one(api_client_for, body):
    question = QuestionFactory()
    client = api_client_for(UserFactory())
    client.put(note_url(question), {"text": "Kept."}, format="json")
    response = client.put(note_url(question), body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert client.get(note_url(question)).json()["text"] == "Kept."


def test_a_note_on_a_missing_question_is_not_found(api_client_for):
    response = api_client_for(UserFactory()).put("/api/v1/questions/999999/note/", {"text": "?"}, format="json")
    assert response.status_code == 404
    assert not Note.objects.exists()


def test_the_note_box_on_the_attempt_and_question_pages_saves_without_javascript(client):
    attempt = AttemptFactory(question=QuestionFactory(title="Design a queue"))
    client.force_login(attempt.user)
    page = f"/attempts/{attempt.pk}/"
    response = client.post(f"/questions/{attempt.question_id}/note/", {"text": "Think of backpressure.", "next": page})
    assert response.status_code == 302
    assert response["Location"] == page
    assert "Think of backpressure." in client.get(page).content.decode()
    assert "Think of backpressure." in client.get(f"/questions/{attempt.question_id}/").content.decode()


def test_the_notes_page_lists_the_candidates_notes_with_their_questions(client):
    user = UserFactory()
    written = QuestionFactory(title="Design a queue")
    QuestionFactory(title="Untouched question")
    Note.objects.create(user=user, question=written, text="Think of backpressure.")
    Note.objects.create(user=UserFactory(), question=written, text="Someone else's.")
    client.force_login(user)
    body = client.get("/notes/").content.decode()
    assert "Design a queue" in body and "Think of backpressure." in body
    assert "Untouched question" not in body
    assert "Someone else" not in body
