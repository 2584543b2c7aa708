"""History through the API: every submission opens with its answer, and the catalogue carries
the caller's best score and solved mark, read in one query whatever the page holds."""

import pytest

from attempts.models import AttemptStatus, Result, ResultOutcome, Submission, SubmissionStatus
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


def _submission(attempt, answer, *, status=SubmissionStatus.COMPLETED, language="python", score=None):
    submission = Submission.objects.create(attempt=attempt, answer=answer, language=language, status=status)
    if score is not None:
        Result.objects.create(submission=submission, score=score, max_score=100, feedback="ok")
    return submission


def _not_scored(attempt):
    submission = _submission(attempt, "   hm")
    Result.objects.create(
        submission=submission, score=None, max_score=100, outcome=ResultOutcome.NOT_SCORED, reason="too_short"
    )
    return submission


def test_a_submission_carries_its_answer_and_language_superseded_ones_too(api_client_for):
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    old = _submission(attempt, "first try\n", status=SubmissionStatus.SUPERSEDED, language="go")
    client = api_client_for(user)
    body = client.get(f"/api/v1/submissions/{old.pk}/").json()
    assert body["answer"] == "first try\n"
    assert body["language"] == "go"
    assert body["status"] == "superseded"
    assert body["result"] is None


def test_the_attempts_submission_list_carries_every_answer_newest_first(api_client_for):
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    _submission(attempt, "one", status=SubmissionStatus.SUPERSEDED)
    _submission(attempt, "two", score=40)
    body = api_client_for(user).get(f"/api/v1/attempts/{attempt.pk}/submissions/").json()
    assert [(s["answer"], s["language"]) for s in body["results"]] == [("two", "python"), ("one", "python")]
    assert body["results"][0]["result"]["score"] == 40


def test_another_users_submission_is_404(api_client_for):
    theirs = _submission(AttemptFactory(), "secret")
    response = api_client_for(UserFactory()).get(f"/api/v1/submissions/{theirs.pk}/")
    assert response.status_code == 404
    assert "secret" not in response.content.decode()


def _questions(client, **query):
    response = client.get("/api/v1/questions/", query)
    assert response.status_code == 200, response.content
    return {q["title"]: q for q in response.json()["results"]}


def test_the_catalogue_carries_the_callers_best_score_and_solved_mark(api_client_for):
    user = UserFactory()
    solved = QuestionFactory(title="Solved once")
    tried = QuestionFactory(title="Tried")
    QuestionFactory(title="Never tried")
    blank = QuestionFactory(title="Only a blank answer")
    first = AttemptFactory(user=user, question=solved)
    _submission(first, "a", score=100)
    _submission(first, "b", score=45.5)
    _submission(AttemptFactory(user=user, question=tried), "c", score=60)
    _submission(AttemptFactory(user=user, question=tried), "d", score=20)
    _not_scored(AttemptFactory(user=user, question=blank))
    _submission(AttemptFactory(question=tried), "somebody else's", score=100)

    rows = _questions(api_client_for(user))
    assert (rows["Solved once"]["best_score"], rows["Solved once"]["solved"]) == (100.0, True)
    assert (rows["Tried"]["best_score"], rows["Tried"]["solved"]) == (60.0, False)
    assert (rows["Never tried"]["best_score"], rows["Never tried"]["solved"]) == (None, False)
    assert (rows["Only a blank answer"]["best_score"], rows["Only a blank answer"]["solved"]) == (None, False)


def test_the_best_score_is_a_percent_of_the_full_score(api_client_for):
    user = UserFactory()
    attempt = AttemptFactory(user=user, question=QuestionFactory(title="Out of eight"))
    submission = Submission.objects.create(attempt=attempt, answer="x", status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, score=6, max_score=8)
    assert _questions(api_client_for(user))["Out of eight"]["best_score"] == 75.0


def test_the_catalogue_reads_scores_in_one_query_whatever_the_page_holds(api_client_for, django_assert_num_queries):
    user = UserFactory()
    client = api_client_for(user)
    question = QuestionFactory()
    _submission(AttemptFactory(user=user, question=question), "a", score=50)
    client.get("/api/v1/questions/")  # the token is cached from here on

    def queries() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            assert client.get("/api/v1/questions/", {"page_size": 50}).status_code == 200
        return len(captured)

    one = queries()
    for _ in range(12):
        attempt = AttemptFactory(user=user, question=QuestionFactory())
        _submission(attempt, "a", score=80)
        _submission(attempt, "b", score=90)
    assert queries() == one
    # count, the page, the scores; the token is in the cache
    assert one == 3


def test_q_and_topic_are_query_parameters_of_the_catalogue(api_client_for):
    QuestionFactory(title="Shortest path in a grid", topics=["Graphs"], prompt="Walk the grid.")
    QuestionFactory(title="Two sum", topics=["arrays"], prompt="Find two numbers.")
    client = api_client_for(UserFactory())
    assert list(_questions(client, q="SHORTEST")) == ["Shortest path in a grid"]
    assert list(_questions(client, topic="graphs")) == ["Shortest path in a grid"]
    assert list(_questions(client, q="numbers", topic="ARRAYS")) == ["Two sum"]
    assert _questions(client, q="walk", topic="arrays") == {}


def test_the_attempt_payload_still_shows_only_the_latest_result(api_client_for):
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    _submission(attempt, "good", score=100)
    latest = _submission(attempt, "worse", score=45.5)
    attempt.latest_submission = latest
    attempt.status = AttemptStatus.COMPLETED
    attempt.save()
    body = api_client_for(user).get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert body["result"]["score"] == 45.5
