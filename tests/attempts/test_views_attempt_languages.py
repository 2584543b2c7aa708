"""The attempt page in five languages: the picker, each language's draft and starter, the form
post's language, and which language and version ran, in the result and in a run's panel."""

import html
import json
import re

import pytest

from attempts import views_attempt
from attempts.models import Result, Run, RunStatus, Submission, SubmissionStatus
from attempts.presenting import result_view, time_words
from evaluation.languages import language_versions
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

KEY = re.compile(r'name="idempotency_key" value="([^"]+)"')
# What the page is given as starters: the page's own logic, not the adapters', is under test here.
STARTERS = {
    "python": "def sum_of_list(numbers: list[int]) -> int:\n    pass\n",
    "javascript": "function sumOfList(numbers) {\n}\n",
    "java": "class Solution {\n}\n",
}
LANGUAGES = [
    {"id": "python", "name": "Python", "version": "3.11.2", "available": True},
    {"id": "javascript", "name": "JavaScript", "version": "20.20.2", "available": True},
    {"id": "java", "name": "Java", "version": None, "available": False},
    {"id": "cpp", "name": "C++", "version": "12.2.0", "available": True},
    {"id": "go", "name": "Go", "version": "1.19.8", "available": True},
]


@pytest.fixture
def candidate(client, db):
    user = UserFactory()
    client.force_login(user)
    return user


@pytest.fixture
def languages(monkeypatch):
    monkeypatch.setattr(views_attempt, "question_starter_codes", lambda *, question: dict(STARTERS))
    # The toolchains as this web process finds them: Java missing.
    for row in LANGUAGES:
        monkeypatch.setitem(language_versions(), row["id"], row["version"])


def coding_attempt(user):
    question = QuestionFactory(
        kind="coding",
        evaluator="code",
        evaluation_spec={
            "signature": {
                "function": "sum_of_list",
                "params": [{"name": "numbers", "type": "list<int>"}],
                "returns": "int",
            },
            "tests": [{"name": "example", "visible": True, "args": [[1, 2]], "expected": 3}],
        },
    )
    return AttemptFactory(user=user, question=question)


def page_data(content: str, name: str):
    match = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', content, re.S)
    assert match, f"the page carries no {name} data"
    return json.loads(match.group(1))


def textarea_text(content: str) -> str:
    return html.unescape(re.search(r"<textarea name=\"answer\"[^>]*>(.*?)</textarea>", content, re.S).group(1))


def options(content: str) -> dict[str, str]:
    select = re.search(r'<select name="language".*?</select>', content, re.S).group(0)
    return {value: tag for value, tag in re.findall(r'<option value="([^"]+)"([^>]*>[^<]*)</option>', select)}


def put_draft(api_client_for, user, attempt, answer, language):
    response = api_client_for(user).put(
        f"/api/v1/attempts/{attempt.pk}/draft/", {"answer": answer, "language": language}, format="json"
    )
    assert response.status_code == 200, response.content


def test_the_picker_offers_the_questions_languages_and_shows_the_missing_ones_disabled(client, candidate, languages):
    attempt = coding_attempt(candidate)
    content = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert '<label for="answer-language">Language</label>' in content
    shown = options(content)
    assert list(shown) == ["python", "javascript", "java"], "only the languages the question has starters for"
    assert " selected" in shown["python"] and "Python 3.11.2" in shown["python"]
    assert "disabled" in shown["java"] and "Java (not installed)" in shown["java"]
    assert 'data-mode="ace/mode/javascript"' in shown["javascript"] and "disabled" not in shown["javascript"]
    assert page_data(content, "editor-starters") == STARTERS
    assert textarea_text(content) == STARTERS["python"]
    assert 'data-editor-mode="ace/mode/python"' in content


def test_the_page_opens_on_the_attempts_language_with_its_draft_and_carries_every_draft(
    client, candidate, languages, api_client_for
):
    attempt = coding_attempt(candidate)
    put_draft(api_client_for, candidate, attempt, "def sum_of_list(numbers):\n    return 0\n", "python")
    put_draft(api_client_for, candidate, attempt, "function sumOfList(n) { return 1; }", "javascript")
    content = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert " selected" in options(content)["javascript"]
    assert 'data-editor-mode="ace/mode/javascript"' in content
    assert textarea_text(content) == "function sumOfList(n) { return 1; }"
    assert page_data(content, "editor-texts") == {
        "python": "def sum_of_list(numbers):\n    return 0\n",
        "javascript": "function sumOfList(n) { return 1; }",
    }


def test_a_submission_newer_than_the_draft_opens_in_its_own_language(client, candidate, languages, api_client_for):
    attempt = coding_attempt(candidate)
    put_draft(api_client_for, candidate, attempt, "typed before", "javascript")
    response = api_client_for(candidate).post(
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": "function sumOfList(n) { return 2; }", "language": "javascript"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="submit-in-javascript",
    )
    assert response.status_code == 202, response.content
    content = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert " selected" in options(content)["javascript"]
    assert textarea_text(content) == "function sumOfList(n) { return 2; }"


def test_the_form_post_submits_in_the_language_chosen(client, candidate, languages):
    attempt = coding_attempt(candidate)
    key = KEY.search(client.get(f"/attempts/{attempt.pk}/").content.decode()).group(1)
    answer = "function sumOfList(numbers) { return numbers.reduce((a, b) => a + b, 0); }"
    response = client.post(
        f"/attempts/{attempt.pk}/", {"answer": answer, "language": "javascript", "idempotency_key": key}
    )
    assert response.status_code == 302
    submission = Submission.objects.get(attempt=attempt)
    assert (submission.language, submission.answer) == ("javascript", answer)
    attempt.refresh_from_db()
    assert attempt.language == "javascript"
    # The same form again is the same submission; the same key in another language is not.
    again = client.post(
        f"/attempts/{attempt.pk}/", {"answer": answer, "language": "javascript", "idempotency_key": key}
    )
    assert again["Location"] == response["Location"] and Submission.objects.filter(attempt=attempt).count() == 1
    other = client.post(f"/attempts/{attempt.pk}/", {"answer": answer, "language": "python", "idempotency_key": key})
    assert other.status_code == 422


def test_an_unknown_language_is_refused_with_the_text_kept(client, candidate, languages):
    attempt = coding_attempt(candidate)
    key = KEY.search(client.get(f"/attempts/{attempt.pk}/").content.decode()).group(1)
    response = client.post(
        f"/attempts/{attempt.pk}/", {"answer": "print(1)", "language": "cobol", "idempotency_key": key}
    )
    content = response.content.decode()
    assert response.status_code == 400
    assert "Unknown language" in content and textarea_text(content) == "print(1)"
    assert not Submission.objects.filter(attempt=attempt).exists()


def test_a_prose_question_has_no_picker_and_submits_without_a_language(client, candidate):
    attempt = AttemptFactory(user=candidate)
    content = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert "answer-language" not in content and "editor-starters" not in content
    # A written answer is prose: a wrapping text area, no code editor.
    assert 'class="answer prose"' in content and "data-editor" not in content
    key = KEY.search(content).group(1)
    assert (
        client.post(f"/attempts/{attempt.pk}/", {"answer": "Shard by key.", "idempotency_key": key}).status_code == 302
    )
    assert Submission.objects.get(attempt=attempt).language == "python"


def test_the_result_says_which_language_and_version_ran(client, candidate, languages):
    attempt = coding_attempt(candidate)
    submission = Submission.objects.create(
        attempt=attempt, answer="class Solution {}", language="java", status=SubmissionStatus.COMPLETED
    )
    Result.objects.create(
        submission=submission,
        score=0,
        max_score=100,
        feedback="Your code does not compile.",
        details={
            "language": {"id": "java", "name": "Java", "version": "17.0.15"},
            "load_error": {"kind": "compile", "message": "';' expected", "line": 3, "column": 14},
            "tests": [],
        },
    )
    attempt.latest_submission = submission
    attempt.status = "completed"
    attempt.version += 1
    attempt.save()
    content = client.get(f"/attempts/{attempt.pk}/live/").content.decode()
    assert "Ran in Java 17.0.15" in content
    assert "Your code does not compile" in content and "(line 3, column 14)" in content
    assert "&#x27;;&#x27; expected" in content
    assert "More details" not in content, "the language is shown once, not again among the details"


def test_a_runs_panel_says_which_language_ran_it(client, candidate, languages):
    attempt = coding_attempt(candidate)
    run = Run.objects.create(
        user=candidate,
        attempt=attempt,
        answer="function sumOfList(n) { return 3; }",
        language="javascript",
        status=RunStatus.COMPLETED,
        result={
            "language": {"id": "javascript", "name": "JavaScript", "version": "20.20.2"},
            "load_error": None,
            "stopped": {"test": "example", "reason": "crashed", "not_run": 0},
            "cases": [
                {"name": "example", "input": "numbers = [1, 2]", "expected": "3", "got": None, "outcome": "error",
                 "stdout": "", "time_ms": 0.4, "error": "TypeError: n.reduce is not a function"},
            ],
        },
    )  # fmt: skip
    content = client.get(f"/runs/{run.pk}/panel/").content.decode()
    assert "Ran in JavaScript 20.20.2" in content
    assert "example" in content and "TypeError: n.reduce is not a function" in content
    assert "Test “example” made the program stop." in content


def test_a_runs_panel_shows_the_version_and_time_the_worker_reported_not_the_web_servers(client, candidate, languages):
    attempt = coding_attempt(candidate)
    run = Run.objects.create(
        user=candidate,
        attempt=attempt,
        answer="int64_t sum_of_list(const std::vector<int64_t>& n) { return 3; }",
        language="cpp",
        status=RunStatus.COMPLETED,
        result={
            # The worker's compiler is newer than the one this web server finds (12.2.0).
            "language": {"id": "cpp", "name": "C++", "version": "14.2.0"},
            "time": {"compile_ms": 812.4, "run_ms": 45.2},
            "load_error": None,
            "stopped": None,
            "cases": [
                {"name": "example", "input": "[1, 2]", "expected": "3", "got": "3", "outcome": "passed",
                 "stdout": "", "time_ms": 0.1, "error": None},
            ],
        },
    )  # fmt: skip
    content = client.get(f"/runs/{run.pk}/panel/").content.decode()
    assert "Ran in C++ 14.2.0 (812 ms to compile, 45 ms to run)</p>" in content
    assert "12.2.0" not in content


def test_a_runs_panel_without_the_workers_language_names_it_as_the_web_server_finds_it(client, candidate, languages):
    attempt = coding_attempt(candidate)
    run = Run.objects.create(
        user=candidate,
        attempt=attempt,
        answer="func sumOfList(numbers []int64) int64 { return 3 }",
        language="go",
        status=RunStatus.COMPLETED,
        result={"load_error": None, "stopped": None, "cases": []},  # recorded before workers reported it
    )
    content = client.get(f"/runs/{run.pk}/panel/").content.decode()
    assert "Ran in Go 1.19.8</p>" in content


def test_a_result_says_how_long_it_compiled_and_ran_and_when_the_same_code_was_compiled_before():
    assert (
        time_words({"compile_ms": 812.4, "run_ms": 45.2, "compile_cached": False}) == "812 ms to compile, 45 ms to run"
    )
    assert time_words({"compile_ms": 0.0, "run_ms": 45.2, "compile_cached": True}) == "compiled earlier, 45 ms to run"
    assert time_words({"compile_ms": None, "run_ms": 20.4, "compile_cached": False}) == "20 ms"
    details = {
        "passed": 0,
        "total": 0,
        "tests": [],
        "language": {"id": "java", "name": "Java", "version": "17.0.15"},
        "time": {"compile_ms": 950.0, "run_ms": 130.0, "compile_cached": False},
    }
    view = result_view({"score": 0, "max_score": 100, "feedback": "", "details": details})
    assert view["ran_in"] == "Ran in Java 17.0.15 (950 ms to compile, 130 ms to run)"
    assert view["others"] == []  # not repeated as raw JSON under "More details"
