"""The server-rendered pages: they adapt forms to the same services as the API, so a double click
is one submission, a refusal keeps the candidate's text, and another user's attempt is not there."""

import dataclasses
import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.utils.html import escape

from attempts.models import (
    AttemptStatus,
    IdempotencyRecord,
    PracticeRequest,
    PracticeRequestStatus,
    Result,
    Submission,
    SubmissionStatus,
)
from attempts.services.admission import evaluate_backlog
from evaluation.languages import LANGUAGES, starter_codes
from evaluation.models import EvaluationJob, JobStatus
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory

PASSWORD = "correct horse battery staple"
KEY = re.compile(r'name="idempotency_key" value="([^"]+)"')


def hidden_key(response) -> str:
    match = KEY.search(response.content.decode())
    assert match, "the form carries no idempotency key"
    return match.group(1)


def textarea_text(response) -> str:
    match = re.search(r"<textarea[^>]*>(.*?)</textarea>", response.content.decode(), re.S)
    assert match, "the page has no answer textarea"
    return match.group(1)


def attempt_page(client, attempt):
    return client.get(f"/attempts/{attempt.pk}/")


def submit(client, attempt, answer, key):
    return client.post(f"/attempts/{attempt.pk}/", {"answer": answer, "idempotency_key": key})


@pytest.fixture
def candidate(client, db):
    user = UserFactory()
    client.force_login(user)
    return user


# --- accounts ------------------------------------------------------------------------------


def test_register_logs_in_then_logout_and_login_again(client, db):
    response = client.post(
        "/register/", {"username": "ada", "password": PASSWORD, "password_again": PASSWORD}, follow=True
    )
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == "/"
    assert response.context["user"].username == "ada"
    assert get_user_model().objects.filter(username="ada").exists()

    assert client.post("/logout/").status_code == 302
    assert client.get("/attempts/").status_code == 302

    response = client.post("/login/", {"username": "ada", "password": PASSWORD, "next": "/attempts/"})
    assert response.status_code == 302
    assert response["Location"] == "/attempts/"
    assert client.get("/attempts/").status_code == 200


def test_register_shows_the_services_refusals_on_the_form(client, db):
    UserFactory(username="taken")
    response = client.post("/register/", {"username": "taken", "password": PASSWORD, "password_again": PASSWORD})
    assert response.status_code == 400
    assert "That username is taken." in response.content.decode()

    response = client.post("/register/", {"username": "bob", "password": "12345678", "password_again": "12345678"})
    assert response.status_code == 400
    assert "too common" in response.content.decode()
    assert get_user_model().objects.filter(username="bob").count() == 0


def test_login_with_a_wrong_password_is_refused(client, db):
    UserFactory(username="ada")
    response = client.post("/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert "do not match" in response.content.decode()
    assert not response.context["user"].is_authenticated


@pytest.mark.parametrize("path", ["/attempts/", "/practice/", "/attempts/1/", "/practice/1/"])
def test_private_pages_send_anonymous_users_to_login(client, db, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/login/?next={path}")


@pytest.mark.parametrize("path", ["/", "/questions/", "/login/", "/register/"])
def test_public_pages_need_no_login(client, db, path):
    assert client.get(path).status_code == 200


# --- questions -----------------------------------------------------------------------------


def test_question_list_filters_by_kind_difficulty_and_topic(client, db):
    graphs = QuestionFactory(title="Shortest path", kind="coding", difficulty="hard", topics=["graphs", "bfs"])
    QuestionFactory(title="Two sum", kind="coding", difficulty="easy", topics=["arrays"])
    QuestionFactory(title="Design a cache", kind="system_design", difficulty="hard", topics=["caching"])
    QuestionFactory(title="Retired one", kind="coding", difficulty="hard", topics=["graphs"], is_active=False)

    def titles(query):
        response = client.get("/questions/", query)
        assert response.status_code == 200
        return [q.title for q in response.context["page"].object_list]

    assert titles({}) == ["Shortest path", "Two sum", "Design a cache"]
    assert titles({"kind": "coding"}) == ["Shortest path", "Two sum"]
    assert titles({"kind": "coding", "difficulty": "hard"}) == ["Shortest path"]
    assert titles({"topic": "graphs"}) == ["Shortest path"]
    assert titles({"topic": "nothing-like-it"}) == []
    # A bad filter is reported and ignored, the others still apply.
    response = client.get("/questions/", {"kind": "poetry", "difficulty": "easy"})
    assert [q.title for q in response.context["page"].object_list] == ["Two sum"]
    assert "This filter was ignored." in response.content.decode()
    assert f'href="/questions/{graphs.pk}/"' in client.get("/questions/").content.decode()


def test_question_list_is_paginated_and_pages_keep_the_filters(client, db):
    for _ in range(25):
        QuestionFactory(kind="coding")
    QuestionFactory(kind="behavioral")
    first = client.get("/questions/", {"kind": "coding"})
    assert len(first.context["page"].object_list) == 20
    assert "?kind=coding&amp;page=2" in first.content.decode()
    second = client.get("/questions/", {"kind": "coding", "page": 2})
    assert len(second.context["page"].object_list) == 5


def test_question_detail_renders_the_prompt_and_never_its_html(client, db):
    question = QuestionFactory(
        kind="coding",
        prompt="Return the **sum**. <script>alert(1)</script>",
        starter_code="def solve(values):\n    pass\n",
        examples=[{"input": "values = [1, 2]", "output": "3", "explanation": "1 + 2 <= 3"}],
    )
    response = client.get(f"/questions/{question.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)" not in html
    assert "Return the <strong>sum</strong>." in html
    assert "values = [1, 2]" in html
    assert escape("1 + 2 <= 3") in html
    assert "def solve(values):" in html
    assert "Log in to practise" in html


STARTER = re.compile(
    r'<details class="starter" data-language="(\w+)"( open)?>\s*<summary>([^<]*)</summary>\s*'
    r'<pre class="code"><code>(.*?)</code></pre>',
    re.S,
)


def test_a_coding_questions_page_shows_every_languages_starter_python_open(client, db):
    question = CodingQuestionFactory()
    assert question.starter_code == ""  # as the loader stores a coding question
    html = client.get(f"/questions/{question.pk}/").content.decode()
    assert "<h2>Starter code</h2>" in html
    shown = STARTER.findall(html)
    starters = starter_codes(question.evaluation_spec)
    assert [language_id for language_id, *_ in shown] == list(LANGUAGES) == list(starters)
    for language_id, opened, name, code in shown:
        assert name == LANGUAGES[language_id].name
        assert code == escape(starters[language_id]), language_id
        assert bool(opened) == (language_id == "python"), "only Python opens on its own"


def test_a_coding_question_stored_before_signatures_shows_its_python_starter(client, db):
    question = CodingQuestionFactory(
        evaluation_spec={"function": "add", "tests": [{"name": "t", "args": [1, 2], "expected": 3}]},
        starter_code="def add(a, b):\n    pass\n",
    )
    html = client.get(f"/questions/{question.pk}/").content.decode()
    assert STARTER.findall(html) == [("python", " open", "Python", "def add(a, b):\n    pass\n")]


def test_a_prose_questions_page_is_unchanged(client, db):
    bare = QuestionFactory(kind="behavioral")
    assert "Starter code" not in client.get(f"/questions/{bare.pk}/").content.decode()
    outlined = QuestionFactory(kind="system_design", starter_code="Requirements:\n- ")
    html = client.get(f"/questions/{outlined.pk}/").content.decode()
    assert '<h2>Starter code</h2>\n  <pre class="code"><code>Requirements:\n- </code></pre>' in html
    assert "<details" not in html


def test_inactive_or_missing_question_is_404(client, db):
    retired = QuestionFactory(is_active=False)
    assert client.get(f"/questions/{retired.pk}/").status_code == 404
    assert client.get("/questions/999999/").status_code == 404


# --- attempts ------------------------------------------------------------------------------


def test_start_creates_a_draft_attempt_and_shows_it_with_the_starter_code(client, candidate):
    question = QuestionFactory(kind="coding", starter_code="def solve():\n    pass\n")
    assert "Start practising" in client.get(f"/questions/{question.pk}/").content.decode()
    response = client.post(f"/questions/{question.pk}/start/")
    attempt = candidate.attempts.get()
    assert response.status_code == 302
    assert response["Location"] == f"/attempts/{attempt.pk}/"
    assert attempt.question == question
    assert attempt.status == AttemptStatus.DRAFT
    page = attempt_page(client, attempt)
    assert page.status_code == 200
    assert textarea_text(page) == "def solve():\n    pass\n"
    assert "Not submitted yet" in page.content.decode()


def test_start_needs_a_post_and_an_active_question(client, candidate):
    question = QuestionFactory()
    assert client.get(f"/questions/{question.pk}/start/")["Location"] == f"/questions/{question.pk}/"
    assert not candidate.attempts.exists()
    retired = QuestionFactory(is_active=False)
    assert client.post(f"/questions/{retired.pk}/start/").status_code == 404


def test_submit_creates_one_submission_and_redirects_to_at_least_its_version(client, candidate):
    attempt = AttemptFactory(user=candidate)
    key = hidden_key(attempt_page(client, attempt))
    response = submit(client, attempt, "my answer\r\nsecond line", key)
    attempt.refresh_from_db()
    submission = Submission.objects.get(attempt=attempt)
    assert response.status_code == 302
    assert response["Location"] == f"/attempts/{attempt.pk}/?v={attempt.version}"
    assert submission.answer == "my answer\nsecond line"
    assert submission.idempotency_key == key
    assert attempt.status == AttemptStatus.QUEUED
    assert attempt.latest_submission == submission

    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.context["attempt"]["version"] == attempt.version
    assert "Your answer was submitted" in html
    assert textarea_text(page) == "my answer\nsecond line"
    assert hidden_key(page) != key, "every drawn form needs a fresh key"
    # Pending: the page keeps itself up to date, with and without JavaScript.
    assert f'data-live-url="/attempts/{attempt.pk}/live/"' in html and "data-pending" in html
    assert f'http-equiv="refresh" content="2;url=?v={attempt.version}"' in html


def test_the_same_form_posted_twice_is_one_submission(client, candidate):
    attempt = AttemptFactory(user=candidate)
    key = hidden_key(attempt_page(client, attempt))
    first = submit(client, attempt, "print(1)", key)
    second = submit(client, attempt, "print(1)", key)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Submission.objects.filter(attempt=attempt).count() == 1
    assert EvaluationJob.objects.filter(kind="evaluate", subject_id__in=attempt.submissions.values("pk")).count() == 1
    assert client.get(second["Location"]).status_code == 200


def test_a_reused_key_with_other_text_keeps_the_text_and_draws_a_fresh_key(client, candidate):
    attempt = AttemptFactory(user=candidate)
    key = hidden_key(attempt_page(client, attempt))
    submit(client, attempt, "first text", key)
    response = submit(client, attempt, "edited text", key)
    assert response.status_code == 422
    assert "already been used" in response.content.decode()
    assert textarea_text(response) == "edited text"
    fresh = hidden_key(response)
    assert fresh != key
    assert Submission.objects.filter(attempt=attempt).count() == 1
    assert submit(client, attempt, "edited text", fresh).status_code == 302
    assert list(Submission.objects.filter(attempt=attempt).values_list("answer", flat=True)) == [
        "edited text",
        "first text",
    ]


def test_another_users_attempt_is_404_to_read_and_to_submit(client, candidate):
    theirs = AttemptFactory()
    assert attempt_page(client, theirs).status_code == 404
    assert submit(client, theirs, "mine now", "k-theirs").status_code == 404
    assert not Submission.objects.exists()
    assert not IdempotencyRecord.objects.exists()


def test_overload_is_503_with_retry_after_and_keeps_the_answer(client, candidate):
    attempt = AttemptFactory(user=candidate)
    waiting = Submission.objects.create(attempt=AttemptFactory(), answer="someone else's")
    EvaluationJob.objects.create(
        kind="evaluate", subject_id=waiting.pk, status=JobStatus.PENDING, max_tries=settings.CONFIG.job_max_tries
    )
    key = hidden_key(attempt_page(client, attempt))
    answer = "def solve(values):\n    return sorted(values)  # <kept> & 'quoted'\n"
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluate_queue_limit=1)):
        assert evaluate_backlog(fresh=True) == 1
        response = submit(client, attempt, answer, key)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    html = response.content.decode()
    assert "Evaluation is busy right now" in html
    assert "please try again in 5 seconds" in html
    assert textarea_text(response) == escape(answer)
    assert hidden_key(response) == key
    assert not Submission.objects.filter(attempt=attempt).exists()
    attempt.refresh_from_db()
    assert attempt.status == AttemptStatus.DRAFT
    assert not IdempotencyRecord.objects.exists()


def test_too_large_answer_is_413_and_keeps_the_text(client, candidate):
    attempt = AttemptFactory(user=candidate)
    key = hidden_key(attempt_page(client, attempt))
    answer = "x" * (settings.ANSWER_MAX_BYTES + 1)
    response = submit(client, attempt, answer, key)
    assert response.status_code == 413
    assert "the limit is 65536 bytes" in response.content.decode()
    assert textarea_text(response) == answer
    assert not Submission.objects.exists()


def test_empty_answer_is_400_with_a_message(client, candidate):
    attempt = AttemptFactory(user=candidate)
    response = submit(client, attempt, "   \n", hidden_key(attempt_page(client, attempt)))
    assert response.status_code == 400
    assert "Write an answer before submitting." in response.content.decode()
    assert not Submission.objects.exists()


def test_a_form_without_its_key_submits_nothing_and_keeps_the_text(client, candidate):
    attempt = AttemptFactory(user=candidate)
    response = client.post(f"/attempts/{attempt.pk}/", {"answer": "my text"})
    assert response.status_code == 400
    assert textarea_text(response) == "my text"
    assert hidden_key(response)
    assert not Submission.objects.exists()


def test_the_attempt_page_shows_the_completed_result_with_its_details(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(kind="coding", title="Balanced brackets"))
    older = Submission.objects.create(attempt=attempt, answer="old", status=SubmissionStatus.SUPERSEDED)
    latest = Submission.objects.create(attempt=attempt, answer="def f():\n    return 1\n")
    latest.status = SubmissionStatus.COMPLETED
    latest.save()
    Result.objects.create(
        submission=latest,
        score=66.7,
        max_score=100,
        feedback="2 of 3 tests passed; failing: crossed (wrong answer).",
        details={
            "tests": [
                {
                    "name": "nested",
                    "visible": True,
                    "outcome": "failed",
                    "time_ms": 1.2,
                    "input": '"(<b>)"',
                    "expected": "true",
                    "got": "false",
                    "stdout": "looking at <b>\n",
                    "error": None,
                },
                {"name": "empty", "visible": False, "outcome": "passed", "time_ms": 0.4},
                {"name": "crossed", "visible": False, "outcome": "timeout", "time_ms": 2000},
            ],
            "criteria": [
                {
                    "id": "clarity",
                    "title": "Explains the approach",
                    "weight": 2,
                    "score": 0.5,
                    "met": False,
                    "found": ["stack"],
                    "missing": ["complexity"],
                    "explanation": "Covered stack; needs 1 more of: complexity.",
                }
            ],
            "stopped": {"test": "crossed", "reason": "timeout", "not_run": 0},
            "load_error": None,
            "passed": 1,
            "total": 3,
            "reviewer": "the rubric",
        },
    )
    attempt.status = AttemptStatus.COMPLETED
    attempt.latest_submission = latest
    attempt.scored_submission = latest
    attempt.version = 4
    attempt.save()

    response = client.get(f"/attempts/{attempt.pk}/?v=4")
    html = response.content.decode()
    assert response.status_code == 200
    assert response.context["attempt"]["status"] == "completed"
    assert "Balanced brackets" in html
    assert "Version" not in html  # internals stay out of a candidate's sight
    assert "66.7" in html and "/ 100" in html
    assert "2 of 3 tests passed; failing: crossed (wrong answer)." in html
    assert "(1 of 3 passed)" in html
    assert "Wrong answer" in html and "Time limit" in html
    # A visible example shows what went in, what was expected and what came back, escaped.
    assert escape('"(<b>)"') in html and "looking at &lt;b&gt;" in html
    assert "<dt>Expected</dt>" in html and "<dt>Got</dt>" in html
    assert "hidden test" in html
    assert "Test “crossed” was still running when the time limit ran out." in html
    assert "Explains the approach" in html
    assert "Missing" in html and "complexity" in html
    assert "<dt>Reviewer</dt>" in html  # details beyond tests and criteria still show
    assert textarea_text(response) == "def f():\n    return 1\n"
    assert [s["id"] for s in response.context["submissions"]] == [latest.pk, older.pk]
    assert "Replaced by a newer answer" in html
    # Nothing pending: the page does not reload itself.
    assert 'http-equiv="refresh"' not in html


def test_status_panel_and_submissions_table_say_the_same(client, candidate):
    attempt = AttemptFactory(user=candidate)
    key = hidden_key(attempt_page(client, attempt))
    submit(client, attempt, "my answer", key)
    # The worker has moved the submission on; the page draws both from the attempt's state.
    Submission.objects.filter(attempt=attempt).update(status=SubmissionStatus.PROCESSING)
    page = attempt_page(client, attempt)
    assert page.context["status_word"] == "Waiting to be graded"
    assert [row["status_word"] for row in page.context["submissions"]] == ["Waiting to be graded"]


def test_the_live_panel_alone_is_served_for_the_page_script(client, candidate):
    attempt = AttemptFactory(user=candidate)
    response = client.get(f"/attempts/{attempt.pk}/live/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f'data-version="{attempt.version}"' in html and "<html" not in html
    assert client.get(f"/attempts/{AttemptFactory().pk}/live/").status_code == 404


def test_the_draft_newer_than_the_latest_submission_opens_in_the_editor(client, candidate, api_client_for):
    attempt = AttemptFactory(user=candidate)
    submit(client, attempt, "submitted text", hidden_key(attempt_page(client, attempt)))
    assert textarea_text(attempt_page(client, attempt)) == "submitted text"
    assert (
        api_client_for(candidate)
        .put(f"/api/v1/attempts/{attempt.pk}/draft/", {"answer": "typed since"}, format="json")
        .status_code
        == 200
    )
    assert textarea_text(attempt_page(client, attempt)) == "typed since"


def test_prompts_are_rendered_from_markdown_and_sanitised(client, db):
    prompt = "Is it **balanced**? Use `stack`.\n\n<script>alert(1)</script><img src=x onerror=alert(1)>"
    question = QuestionFactory(prompt=prompt)
    html = client.get(f"/questions/{question.pk}/").content.decode()
    assert "<strong>balanced</strong>" in html and "<code>stack</code>" in html
    assert "<script>alert(1)" not in html and "onerror" not in html


def test_favicon_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")


def test_an_attempt_at_a_retired_question_still_opens(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(is_active=False))
    response = attempt_page(client, attempt)
    assert response.status_code == 200
    assert f"Attempt {attempt.pk}" in response.content.decode()
    assert textarea_text(response) == ""


def test_my_attempts_lists_only_mine_newest_first(client, candidate):
    first = AttemptFactory(user=candidate, question=QuestionFactory(title="First question"))
    second = AttemptFactory(user=candidate, question=QuestionFactory(title="Second question"))
    AttemptFactory(question=QuestionFactory(title="Somebody else's"))
    response = client.get("/attempts/")
    html = response.content.decode()
    assert [row["attempt"].pk for row in response.context["rows"]] == [second.pk, first.pk]
    assert "Somebody else" not in html


# --- practice requests ---------------------------------------------------------------------


def test_practice_request_is_one_per_form_and_its_page_follows_it_to_the_attempt(client, candidate):
    form = client.get("/practice/?kind=coding")
    assert form.status_code == 200
    key = hidden_key(form)
    data = {"kind": "coding", "difficulty": "hard", "topic": "graphs", "idempotency_key": key}
    first = client.post("/practice/", data)
    second = client.post("/practice/", data)
    practice = PracticeRequest.objects.get(user=candidate)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == f"/practice/{practice.pk}/"
    assert (practice.kind, practice.difficulty, practice.topic) == ("coding", "hard", "graphs")

    queued = client.get(f"/practice/{practice.pk}/")
    assert 'http-equiv="refresh"' in queued.content.decode()

    attempt = AttemptFactory(user=candidate, question=QuestionFactory(kind="coding", title="Graph walk"))
    PracticeRequest.objects.filter(pk=practice.pk).update(
        status=PracticeRequestStatus.COMPLETED,
        question=attempt.question,
        attempt=attempt,
        note="There is no hard graphs coding question in the bank; chose a medium one.",
    )
    done = client.get(f"/practice/{practice.pk}/")
    html = done.content.decode()
    assert 'http-equiv="refresh"' not in html
    assert "chose a medium one" in html
    assert "Graph walk" in html
    assert f'href="/attempts/{attempt.pk}/"' in html


def test_practice_request_form_refusals(client, candidate):
    key = hidden_key(client.get("/practice/"))
    client.post("/practice/", {"kind": "coding", "idempotency_key": key})
    reused = client.post("/practice/", {"kind": "behavioral", "idempotency_key": key})
    assert reused.status_code == 422
    assert hidden_key(reused) != key
    bad = client.post("/practice/", {"kind": "poetry", "idempotency_key": "k-bad-kind"})
    assert bad.status_code == 400
    assert PracticeRequest.objects.filter(user=candidate).count() == 1


def test_another_users_practice_request_is_404(client, candidate):
    theirs = PracticeRequest.objects.create(user=UserFactory())
    assert client.get(f"/practice/{theirs.pk}/").status_code == 404


@pytest.mark.django_db
def test_double_click_on_start_opens_one_attempt(client):
    import re

    from attempts.models import Attempt
    from tests.factories import QuestionFactory, UserFactory

    user, question = UserFactory(), QuestionFactory()
    client.force_login(user)
    page = client.get(f"/questions/{question.pk}/").content.decode()
    key = re.search(r'name="idempotency_key" value="([0-9a-f]+)"', page).group(1)
    first = client.post(f"/questions/{question.pk}/start/", {"idempotency_key": key})
    second = client.post(f"/questions/{question.pk}/start/", {"idempotency_key": key})
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Attempt.objects.filter(user=user, question=question).count() == 1
