"""Settings: blind mode hides difficulty and topics while practising; the time zone is the
pages' own."""

from datetime import UTC, datetime

import pytest

from attempts.models import Note, Preferences
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def question():
    return QuestionFactory(title="Rate limiter", difficulty="hard", topics=["distributed-locks"])


def test_the_settings_page_saves_blind_mode_and_the_time_zone(client):
    user = UserFactory()
    client.force_login(user)
    page = client.get("/settings/").content.decode()
    assert "data-zone-unset" in page  # never saved: the script picks the browser's zone
    assert '<option value="Europe/Paris">' in page
    response = client.post("/settings/", {"blind": "on", "time_zone": "Europe/Paris"})
    assert response.status_code == 302
    saved = Preferences.objects.get(user=user)
    assert (saved.blind, saved.time_zone) == (True, "Europe/Paris")
    assert "data-zone-unset" not in client.get("/settings/").content.decode()


def test_an_unknown_time_zone_is_refused_with_a_message(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post("/settings/", {"time_zone": "Mars/Olympus_Mons"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert not Preferences.objects.filter(user=user).exists()


def test_blind_mode_hides_difficulty_and_topics_on_the_practice_pages(client, question):
    attempt = AttemptFactory(question=question)
    client.force_login(attempt.user)
    pages = ["/questions/", f"/questions/{question.pk}/", f"/attempts/{attempt.pk}/", "/attempts/"]
    for url in pages:
        body = client.get(url).content.decode()
        assert "Hard" in body and ("distributed-locks" in body or url == "/attempts/"), url
    Preferences.objects.create(user=attempt.user, blind=True)
    for url in pages:
        body = client.get(url).content.decode()
        assert "Rate limiter" in body, url
        assert "badge-hard" not in body and "distributed-locks" not in body, url
        assert "· Hard" not in body, url


def test_times_are_shown_in_the_candidates_zone(client, question):
    user = UserFactory()
    note = Note.objects.create(user=user, question=question, text="A note.")
    Note.objects.filter(pk=note.pk).update(updated_at=datetime(2030, 7, 1, 12, 0, tzinfo=UTC))
    client.force_login(user)
    assert "1 Jul 2030, 12:00 UTC" in client.get("/notes/").content.decode()
    Preferences.objects.create(user=user, time_zone="Europe/Paris")
    assert "1 Jul 2030, 14:00 CEST" in client.get("/notes/").content.decode()
