"""One time format on every page, in the candidate's own zone: the `when` filter, and the
middleware that makes the zone of a candidate's preferences the pages' current one."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from asgiref.sync import async_to_sync
from django.template import Context, Template
from django.test import AsyncClient
from django.utils import timezone

from attempts.models import Attempt, Preferences, Submission
from tests.factories import AttemptFactory, UserFactory

MOMENT = datetime(2026, 12, 2, 18, 39, 36, tzinfo=UTC)


def rendered(source: str, **context) -> str:
    return Template("{% load clock %}" + source).render(Context(context))


@pytest.mark.parametrize(
    ("zone", "moment", "shown"),
    [
        ("UTC", MOMENT, '<time datetime="2026-12-02T18:39:36+00:00">2 Dec 2026, 18:39 UTC</time>'),
        ("Europe/Paris", MOMENT, '<time datetime="2026-12-02T19:39:36+01:00">2 Dec 2026, 19:39 CET</time>'),
        (
            "Europe/Paris",
            datetime(2026, 7, 1, 6, 5, tzinfo=UTC),
            '<time datetime="2026-07-01T08:05:00+02:00">1 Jul 2026, 08:05 CEST</time>',
        ),
        ("Asia/Kolkata", MOMENT, '<time datetime="2026-12-03T00:09:36+05:30">3 Dec 2026, 00:09 IST</time>'),
        ("America/New_York", MOMENT, '<time datetime="2026-12-02T13:39:36-05:00">2 Dec 2026, 13:39 EST</time>'),
    ],
)
def test_when_shows_day_month_year_and_24_hour_time_in_the_current_zone(zone, moment, shown):
    with timezone.override(ZoneInfo(zone)):
        assert rendered("{{ value|when }}", value=moment) == shown


def test_when_reads_an_iso_string_and_shows_nothing_for_no_time():
    with timezone.override(ZoneInfo("UTC")):
        assert rendered("{{ value|when }}", value="2026-12-02T18:39:36+00:00") == (
            '<time datetime="2026-12-02T18:39:36+00:00">2 Dec 2026, 18:39 UTC</time>'
        )
        assert rendered("[{{ value|when }}]", value=None) == "[]"
        assert rendered("[{{ value|when }}]", value="not a time") == "[]"


def test_the_page_script_gets_the_zone_and_its_abbreviations():
    with timezone.override(ZoneInfo("Europe/Paris")):
        assert rendered("{% time_zone_attributes %}") == (
            'data-time-zone="Europe/Paris" '
            'data-time-zone-names="{&quot;60&quot;:&quot;CET&quot;,&quot;120&quot;:&quot;CEST&quot;}"'
        )


def started_at(client, user, zone: str | None) -> str:
    if zone is not None:
        Preferences.objects.create(user=user, time_zone=zone)
    attempt = AttemptFactory(user=user)
    Attempt.objects.filter(pk=attempt.pk).update(created_at=MOMENT)
    client.force_login(user)
    content = client.get("/attempts/").content.decode()
    start = content.index("<time ")
    return content[start : content.index("</time>", start) + len("</time>")]


@pytest.mark.django_db
def test_a_candidate_sees_times_in_the_zone_of_their_preferences(client):
    assert started_at(client, UserFactory(), "Asia/Kolkata") == (
        '<time datetime="2026-12-03T00:09:36+05:30">3 Dec 2026, 00:09 IST</time>'
    )


@pytest.mark.django_db
@pytest.mark.parametrize("zone", [None, "Mars/Olympus_Mons", "../../etc/passwd", ""])
def test_without_a_valid_zone_times_are_shown_in_utc(client, zone):
    assert started_at(client, UserFactory(), zone) == (
        '<time datetime="2026-12-02T18:39:36+00:00">2 Dec 2026, 18:39 UTC</time>'
    )


@pytest.mark.django_db
def test_the_zone_lasts_only_for_the_request_and_the_api_keeps_utc(client, api_client_for):
    user = UserFactory()
    Preferences.objects.create(user=user, time_zone="Asia/Kolkata")
    client.force_login(user)
    client.get("/attempts/")
    assert str(timezone.get_current_timezone()) == "UTC"
    attempt = AttemptFactory(user=user)
    Attempt.objects.filter(pk=attempt.pk).update(created_at=MOMENT)
    # The pages' own calls to the API, on the session, answer in UTC as token calls do.
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["created_at"] == "2026-12-02T18:39:36+00:00"


@pytest.mark.django_db
def test_the_live_panel_served_on_the_async_chain_shows_the_candidates_zone():
    user = UserFactory()
    Preferences.objects.create(user=user, time_zone="Asia/Kolkata")
    attempt = AttemptFactory(user=user)
    submission = attempt.submissions.create(answer="Shard by key.", status="queued")
    Submission.objects.filter(pk=submission.pk).update(created_at=MOMENT)
    client = AsyncClient()

    async def fetch() -> str:
        await client.aforce_login(user)
        response = await client.get(f"/attempts/{attempt.pk}/live/")
        return response.content.decode()

    content = async_to_sync(fetch)()
    assert '<time datetime="2026-12-03T00:09:36+05:30">3 Dec 2026, 00:09 IST</time>' in content
