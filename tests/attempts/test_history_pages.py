"""The history pages: a submission with its answer and result, two submissions compared line by
line, best and latest scores on "My attempts" and in the catalogue."""

import re

import pytest

from attempts.models import AttemptStatus, Result, Submission, SubmissionStatus
from tests.factories import AttemptFactory, QuestionFactory, UserFactory


@pytest.fixture
def candidate(client, db):
    user = UserFactory()
    client.force_login(user)
    return user


def _submission(attempt, answer, *, score=None, status=SubmissionStatus.COMPLETED, language="python", latest=False):
    submission = Submission.objects.create(attempt=attempt, answer=answer, language=language, status=status)
    if score is not None:
        Result.objects.create(submission=submission, score=score, max_score=100, feedback=f"Scored {score}.")
    if latest:
        attempt.latest_submission = submission
        attempt.status = AttemptStatus.COMPLETED if score is not None else AttemptStatus.QUEUED
        attempt.save()
    return submission


def test_a_submission_page_shows_its_answer_escaped_with_language_status_and_result(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(title="Sum a list"))
    submission = _submission(attempt, "def f():\n    return '<b>hi</b>'\n", score=80, language="python")
    response = client.get(f"/submissions/{submission.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<pre class="code"><code>def f():\n    return &#x27;&lt;b&gt;hi&lt;/b&gt;&#x27;\n</code></pre>' in html
    assert "<b>hi</b>" not in html
    assert "Python" in html
    assert "Graded" in html
    assert "80" in html and "Scored 80." in html
    assert f'datetime="{submission.created_at.isoformat()}"'.replace("+00:00", "+00:00") in html
    assert f'href="/attempts/{attempt.pk}/"' in html
    assert "Sum a list" in html


def test_a_superseded_submission_opens_too_and_says_so(client, candidate):
    attempt = AttemptFactory(user=candidate)
    old = _submission(attempt, "old answer", status=SubmissionStatus.SUPERSEDED)
    html = client.get(f"/submissions/{old.pk}/").content.decode()
    assert "old answer" in html
    assert "Replaced by a newer answer" in html
    assert "Not graded" in html


def test_another_users_submission_page_is_404(client, candidate):
    theirs = _submission(AttemptFactory(), "their secret")
    response = client.get(f"/submissions/{theirs.pk}/")
    assert response.status_code == 404
    assert "their secret" not in response.content.decode()


def test_the_attempt_page_links_every_submission_to_its_page(client, candidate):
    attempt = AttemptFactory(user=candidate)
    first = _submission(attempt, "one", status=SubmissionStatus.SUPERSEDED)
    second = _submission(attempt, "two", score=50, latest=True)
    html = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert f'href="/submissions/{first.pk}/"' in html
    assert f'href="/submissions/{second.pk}/"' in html
    assert f'href="/attempts/{attempt.pk}/compare/"' in html


def test_compare_draws_a_line_diff_escaped_with_added_and_removed_lines_marked(client, candidate):
    attempt = AttemptFactory(user=candidate)
    old = _submission(attempt, "a = 1\nb = '<old>'\nc = 3\n", score=40)
    new = _submission(attempt, "a = 1\nb = '<new>'\nc = 3\nd = 4\n", score=100, latest=True)
    response = client.get(f"/attempts/{attempt.pk}/compare/", {"a": old.pk, "b": new.pk})
    html = response.content.decode()
    assert response.status_code == 200
    rows = re.findall(r'<tr class="diff-(\w+)">.*?<td class="diff-text">(.*?)</td>', html, re.S)
    assert rows == [
        ("same", "a = 1"),
        ("removed", "b = &#x27;&lt;old&gt;&#x27;"),
        ("added", "b = &#x27;&lt;new&gt;&#x27;"),
        ("same", "c = 3"),
        ("added", "d = 4"),
    ]
    assert "<old>" not in html
    assert "2 lines added, 1 removed" in html


def test_compare_defaults_to_the_two_newest_and_offers_every_submission_in_two_selects(client, candidate):
    attempt = AttemptFactory(user=candidate)
    first = _submission(attempt, "x = 1\n", status=SubmissionStatus.SUPERSEDED)
    second = _submission(attempt, "x = 2\n", score=10)
    third = _submission(attempt, "x = 3\n", score=20, latest=True)
    response = client.get(f"/attempts/{attempt.pk}/compare/")
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(rf'<select name="a"[^>]*>.*<option value="{second.pk}" selected>', html, re.S)
    assert re.search(rf'<select name="b"[^>]*>.*<option value="{third.pk}" selected>', html, re.S)
    for submission in (first, second, third):
        assert html.count(f'<option value="{submission.pk}"') == 2
    assert "x = 2" in html and "x = 3" in html


def test_compare_from_a_submission_page_sets_it_against_the_one_before(client, candidate):
    attempt = AttemptFactory(user=candidate)
    first = _submission(attempt, "x = 1\n", score=10)
    second = _submission(attempt, "x = 2\n", score=20)
    _submission(attempt, "x = 3\n", score=30, latest=True)
    assert (
        f'href="/attempts/{attempt.pk}/compare/?b={second.pk}"'
        in client.get(f"/submissions/{second.pk}/").content.decode()
    )
    html = client.get(f"/attempts/{attempt.pk}/compare/", {"b": second.pk}).content.decode()
    assert re.search(rf'<select name="a"[^>]*>.*<option value="{first.pk}" selected>', html, re.S)


def test_compare_refuses_a_submission_of_another_attempt_in_words(client, candidate):
    attempt = AttemptFactory(user=candidate)
    mine = _submission(attempt, "x")
    _submission(attempt, "y")
    elsewhere = _submission(AttemptFactory(user=candidate), "z")
    response = client.get(f"/attempts/{attempt.pk}/compare/", {"a": mine.pk, "b": elsewhere.pk})
    assert response.status_code == 400
    assert "Choose two submissions of this attempt" in response.content.decode()
    assert client.get(f"/attempts/{attempt.pk}/compare/", {"a": "nope", "b": mine.pk}).status_code == 400


def test_compare_with_a_single_submission_says_there_is_nothing_to_compare(client, candidate):
    attempt = AttemptFactory(user=candidate)
    _submission(attempt, "x")
    response = client.get(f"/attempts/{attempt.pk}/compare/")
    assert response.status_code == 200
    assert "only one submission" in response.content.decode()


def test_compare_of_another_users_attempt_is_404(client, candidate):
    theirs = AttemptFactory()
    a, b = _submission(theirs, "x"), _submission(theirs, "y")
    assert client.get(f"/attempts/{theirs.pk}/compare/", {"a": a.pk, "b": b.pk}).status_code == 404


def test_my_attempts_shows_the_best_next_to_the_latest_and_links_the_latest_submission(client, candidate):
    question = QuestionFactory(title="Walked question")
    attempt = AttemptFactory(user=candidate, question=question)
    _submission(attempt, "good", score=100)
    latest = _submission(attempt, "worse", score=45.5, latest=True)
    response = client.get("/attempts/")
    html = response.content.decode()
    row = re.search(r"<tr>\s*<th scope=\"row\">.*?Walked question.*?</tr>", html, re.S).group(0)
    assert "45.5" in row
    assert "100%" in row and "Solved" in row
    assert f'href="/submissions/{latest.pk}/"' in row


def test_the_catalogue_marks_solved_questions_and_shows_best_scores(client, candidate):
    solved = QuestionFactory(title="Solved question")
    tried = QuestionFactory(title="Tried question")
    QuestionFactory(title="Untouched question")
    first = AttemptFactory(user=candidate, question=solved)
    _submission(first, "a", score=100)
    _submission(first, "b", score=30)
    _submission(AttemptFactory(user=candidate, question=tried), "c", score=62.5)
    html = client.get("/questions/").content.decode()
    cards = {
        m.group(1): m.group(0)
        for m in re.finditer(r'<li class="card question-row">.*?>([^<]+)</a></h2>.*?</li>', html, re.S)
    }
    assert "Solved" in cards["Solved question"] and "Best 100%" in cards["Solved question"]
    assert "Solved" not in cards["Tried question"] and "Best 62.5%" in cards["Tried question"]
    assert "Best" not in cards["Untouched question"]


def test_the_catalogue_shows_no_scores_to_a_visitor(client, db):
    QuestionFactory(title="Open question")
    html = client.get("/questions/").content.decode()
    assert "Best " not in html and "Solved" not in html
