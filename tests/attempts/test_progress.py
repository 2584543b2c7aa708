"""Progress: solved counts and best scores by kind, difficulty and topic, and scores by day,
from the history; the API, and the page's SVG charts with their tables."""

from datetime import UTC, datetime, timedelta

import pytest

from attempts.charts import score_line_chart, solved_bar_chart
from attempts.selectors.progress import ProgressDay, ProgressGroup, progress_for_user
from tests.attempts.test_reviews import scored
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture
def history():
    """Two coding questions (one solved), one behavioural practised, one design never."""
    user = UserFactory()
    arrays = QuestionFactory(kind="coding", difficulty="easy", topics=["arrays", "Hashing"])
    graphs = QuestionFactory(kind="coding", difficulty="hard", topics=["graphs"])
    story = QuestionFactory(kind="behavioral", difficulty="medium", topics=["hashing"])
    QuestionFactory(kind="system_design", difficulty="hard", topics=["caching"])
    QuestionFactory(kind="coding", is_active=False, topics=["retired"])  # never practised: not counted
    scored(AttemptFactory(user=user, question=arrays), 40, T0)
    scored(AttemptFactory(user=user, question=arrays), 100, T0 + timedelta(hours=2))
    scored(AttemptFactory(user=user, question=graphs), 50, T0 + timedelta(days=2))
    scored(AttemptFactory(user=user, question=story), 70, T0 + timedelta(days=2, hours=1))
    scored(AttemptFactory(question=graphs), 100, T0)  # someone else's
    return user


def test_progress_counts_solved_and_best_scores_by_kind_difficulty_and_topic(history):
    progress = progress_for_user(user_id=history.pk)
    assert (progress.questions, progress.practised, progress.solved, progress.scored_answers) == (4, 3, 1, 4)
    assert progress.by_kind == [
        ProgressGroup("coding", "Coding", questions=2, practised=2, solved=1, average_best_score=75.0),
        ProgressGroup("system_design", "System design", questions=1, practised=0, solved=0, average_best_score=None),
        ProgressGroup("behavioral", "Behavioural", questions=1, practised=1, solved=0, average_best_score=70.0),
    ]
    assert progress.by_difficulty == [
        ProgressGroup("easy", "Easy", questions=1, practised=1, solved=1, average_best_score=100.0),
        ProgressGroup("medium", "Medium", questions=1, practised=1, solved=0, average_best_score=70.0),
        ProgressGroup("hard", "Hard", questions=2, practised=1, solved=0, average_best_score=50.0),
    ]
    # "Hashing" and "hashing" are one topic, as `topic=` matches any case.
    assert progress.by_topic == [
        ProgressGroup("arrays", "arrays", questions=1, practised=1, solved=1, average_best_score=100.0),
        ProgressGroup("caching", "caching", questions=1, practised=0, solved=0, average_best_score=None),
        ProgressGroup("graphs", "graphs", questions=1, practised=1, solved=0, average_best_score=50.0),
        ProgressGroup("hashing", "hashing", questions=2, practised=2, solved=1, average_best_score=85.0),
    ]


def test_scores_over_time_are_one_point_per_day(history):
    assert progress_for_user(user_id=history.pk).over_time == [
        ProgressDay(T0.date(), answers=2, average_score=70.0, best_score=100.0),
        ProgressDay(T0.date() + timedelta(days=2), answers=2, average_score=60.0, best_score=70.0),
    ]


def test_the_line_chart_places_days_by_date_and_scores_on_a_0_to_100_scale():
    days = [
        ProgressDay(T0.date(), answers=1, average_score=100.0, best_score=100.0),
        ProgressDay(T0.date() + timedelta(days=4), answers=1, average_score=0.0, best_score=0.0),
    ]
    chart = score_line_chart(days)
    # Plot from x 44 to 624, y 12 (100 %) to 208 (0 %).
    assert chart["polyline"] == "44.0,12.0 624.0,208.0"
    assert [tick["label"] for tick in chart["ticks"]] == ["03 Mar", "07 Mar"]
    assert score_line_chart(days[:1])["polyline"] == "334.0,12.0"  # one day: in the middle


def test_the_bar_chart_draws_every_group_on_the_scale_of_the_largest():
    chart = solved_bar_chart([ProgressGroup("a", "A", 4, 2, 1, 50.0), ProgressGroup("b", "B", 2, 0, 0, None)])
    # 640 wide, 150 for labels, 60 for the counts: 430 for four questions.
    assert [(r["questions"], r["practised"], r["solved"], r["words"]) for r in chart["rows"]] == [
        (430.0, 215.0, 107.5, "1 of 4"),
        (215.0, 0.0, 0.0, "0 of 2"),
    ]


def test_progress_api_gives_the_same_numbers(history, api_client_for):
    body = api_client_for(history).get("/api/v1/progress/").json()
    assert (body["questions"], body["practised"], body["solved"], body["scored_answers"]) == (4, 3, 1, 4)
    assert body["by_kind"][0] == {
        "key": "coding",
        "label": "Coding",
        "questions": 2,
        "practised": 2,
        "solved": 1,
        "average_best_score": 75.0,
    }
    assert body["over_time"][1] == {"date": "2025-03-05", "answers": 2, "average_score": 60.0, "best_score": 70.0}


def test_progress_api_for_a_newcomer_is_empty_not_an_error(api_client_for):
    body = api_client_for(UserFactory()).get("/api/v1/progress/").json()
    assert (body["practised"], body["solved"], body["over_time"]) == (0, 0, [])


def test_progress_page_draws_svg_charts_with_tables_of_the_same_numbers(history, client):
    client.force_login(history)
    page = client.get("/progress/").content.decode()
    assert page.count('role="img"') == 4  # over time, by kind, by difficulty, by topic
    assert '<title id="over-time-title">' in page
    assert '<polyline class="chart-series" points="' in page
    assert '<td class="num">60 %</td>' in page  # the second day's mean, in the table
    assert "1 of 4 questions solved" in page
    assert "style=" not in page.split("<main")[1]  # the policy allows no inline style


def test_progress_page_without_history_is_a_friendly_empty_state(client):
    client.force_login(UserFactory())
    page = client.get("/progress/").content.decode()
    assert "No scored answers yet" in page
    assert 'role="img"' not in page


def test_progress_and_review_pages_need_a_login_and_are_in_the_navigation(client):
    assert client.get("/progress/")["Location"].startswith("/login/")
    assert client.get("/review/")["Location"].startswith("/login/")
    client.force_login(UserFactory())
    home = client.get("/").content.decode()
    assert 'href="/progress/"' in home and 'href="/review/"' in home
