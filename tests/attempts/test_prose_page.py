"""The attempt page for a written answer: a textarea with its expected length, and feedback that
quotes the answer back with each evidence sentence marked, every piece of it escaped."""

import html
import re

import pytest

from attempts.models import Result, Submission, SubmissionStatus
from attempts.presenting import ran_in_words, time_words
from attempts.presenting_written import answer_segments, length_meter_view
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory

STAR_SPEC = {
    "criteria": [
        {"id": "situation", "title": "The situation", "weight": 20, "star": "situation"},
        {"id": "result", "title": "A result you can measure", "weight": 30, "star": "result"},
        {
            "id": "length",
            "title": "Depth and length",
            "weight": 10,
            "type": "length",
            "min_words": 150,
            "max_words": 900,
        },
    ]
}
ANSWER = (
    "Our checkout service paged the on-call engineer forty times a week.\n\n"
    "I grouped the alerts by cause. Then I deleted the noisy ones.\n"
    "We went from forty alerts a week to three, and nobody was woken at night again."
)
DETAILS = {
    "grader": {"id": "rubric", "model": "all-MiniLM-L6-v2", "version": "int8-onnx-2"},
    "criteria": [
        {
            "id": "situation",
            "title": "The situation",
            "weight": 20,
            "score": 1.0,
            "met": True,
            "evidence": ["Our checkout service paged the on-call engineer forty times a week."],
            "missing": None,
            "star": "situation",
        },
        {
            "id": "result",
            "title": "A result you can measure",
            "weight": 30,
            "score": 0.85,
            "met": True,
            "evidence": ["We went from forty alerts a week to three, and nobody was woken at night again."],
            "missing": None,
            "star": "result",
        },
        {
            "id": "action",
            "title": "What you did yourself",
            "weight": 40,
            "score": 0.2,
            "met": False,
            "evidence": [],
            "missing": "Say which steps you took yourself and why you chose them.",
            "star": None,
        },
    ],
    "follow_up": "Which alert did you keep, and why?",
    "practise_next": "Practise what you did yourself: say which steps you took and why.",
    "insights": {
        "words": 43,
        "speaking_minutes": 0.3,
        "repeated_words": [{"word": "alerts", "count": 3}],
        "filler_words": [{"word": "basically", "count": 2}],
    },
}


def criterion(title, evidence, star=None):
    return {"title": title, "evidence": evidence, "star": star}


def test_segments_cover_the_answer_and_mark_each_evidence_sentence_with_its_star_part():
    segments = answer_segments(ANSWER, DETAILS["criteria"])
    assert "".join(s["text"] for s in segments) == ANSWER
    marked = [(s["text"], s["labels"], s["title"]) for s in segments if s["labels"]]
    assert marked == [
        ("Our checkout service paged the on-call engineer forty times a week.", ["Situation"], "The situation"),
        (
            "We went from forty alerts a week to three, and nobody was woken at night again.",
            ["Result"],
            "A result you can measure",
        ),
    ]


def test_a_sentence_that_appears_twice_is_marked_once_at_its_first_occurrence():
    answer = "We cached reads. Then it held. We cached reads."
    segments = answer_segments(answer, [criterion("Caching", ["We cached reads."])])
    assert [(s["text"], s["labels"]) for s in segments] == [
        ("We cached reads.", ["Caching"]),
        (" Then it held. We cached reads.", []),
    ]


def test_one_sentence_cited_by_two_criteria_is_one_mark_with_both_labels():
    answer = "We sharded by user id. It scaled."
    segments = answer_segments(
        answer, [criterion("Partitioning", ["We sharded by user id."]), criterion("Scale", ["We sharded by user id."])]
    )
    assert segments[0] == {
        "text": "We sharded by user id.",
        "labels": ["Partitioning", "Scale"],
        "title": "Partitioning; Scale",
    }


def test_an_evidence_sentence_not_in_the_answer_marks_nothing():
    answer = "We used a queue. It worked."
    segments = answer_segments(answer, [criterion("Queues", ["We used a message queue."])])
    assert segments == [{"text": answer, "labels": [], "title": ""}]


def test_the_expected_length_in_words_and_speaking_minutes():
    meter = length_meter_view({"min": 150, "max": 900, "min_scored": 25})
    assert (meter["expected"], meter["minimum"]) == (
        "150-900 words, about 1-7 minutes to say",
        "Answers under 25 words are not scored.",
    )
    assert (meter["min"], meter["max"], meter["min_scored"], meter["words_per_minute"]) == (150, 900, 25, 130)
    assert length_meter_view({"min": 100, "max": 160, "min_scored": 25})["expected"] == (
        "100-160 words, about 1 minute to say"
    )
    assert length_meter_view(None) is None


def test_what_ran_is_said_with_ran_only_once():
    python = {"id": "python", "name": "Python", "version": "3.11.2"}
    assert ran_in_words(python, {"compile_ms": None, "run_ms": 24.3}) == "Ran in Python 3.11.2 (24 ms)"
    cpp = {"name": "C++", "version": "14.2.0"}
    assert ran_in_words(cpp, {"compile_ms": 812.4, "run_ms": 45.2}) == (
        "Ran in C++ 14.2.0 (812 ms to compile, 45 ms to run)"
    )
    assert time_words({"compile_ms": 0, "run_ms": 45.2, "compile_cached": True}) == "compiled earlier, 45 ms to run"
    assert ran_in_words({"name": "Go", "version": "1.19.8"}, None) == "Ran in Go 1.19.8"


@pytest.fixture
def candidate(client, db):
    user = UserFactory()
    client.force_login(user)
    return user


def graded(attempt, *, answer, **result):
    submission = Submission.objects.create(attempt=attempt, answer=answer, status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, max_score=100, **result)
    attempt.latest_submission = submission
    attempt.status = "completed"
    attempt.version += 1
    attempt.save()
    return submission


def test_the_feedback_quotes_the_answer_with_its_evidence_marked_and_escaped(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(kind="behavioral", evaluation_spec=STAR_SPEC))
    hostile = '<script>alert("x")</script> I stayed calm & kept <b>notes</b>.'
    details = {**DETAILS, "criteria": [*DETAILS["criteria"], criterion("Composure", [hostile.split("</script> ")[1]])]}
    graded(attempt, answer=f"{ANSWER}\n{hostile}", score=62.5, feedback="Score 62.5/100.", details=details)
    content = client.get(f"/attempts/{attempt.pk}/live/").content.decode()
    assert "<script>alert" not in content and "<b>notes</b>" not in content
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in content
    marks = re.findall(r'<mark class="evidence" title="([^"]*)"><span class="evidence-label">([^<]*)</span> '
                       r'<span class="evidence-text">([^<]*)</span></mark>', content)  # fmt: skip
    assert [(html.unescape(t), label, html.unescape(text)) for t, label, text in marks] == [
        ("The situation", "Situation", "Our checkout service paged the on-call engineer forty times a week."),
        (
            "A result you can measure",
            "Result",
            "We went from forty alerts a week to three, and nobody was woken at night again.",
        ),
        ("Composure", "Composure", "I stayed calm & kept <b>notes</b>."),
    ]
    assert "✗ Missed" in content and "Say which steps you took yourself and why you chose them." in content
    assert "Which alert did you keep, and why?" in content
    assert "Practise what you did yourself: say which steps you took and why." in content
    assert "43 words, about 0.3 minutes to say" in content
    assert "alerts (3×)" in content and "basically (2×)" in content
    assert "62.5" in content


def test_a_not_scored_result_shows_why_and_never_a_score(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(kind="behavioral", title="A hard deadline"))
    feedback = "The answer has 4 words; it needs at least 25 to be scored. A full answer takes 150 to 900 words."
    graded(
        attempt,
        answer="I met the deadline.",
        score=None,
        outcome="not_scored",
        reason="too_short",
        feedback=feedback,
        details={"criteria": [], "insights": {"words": 4, "speaking_minutes": 0.0}},
    )
    live = client.get(f"/attempts/{attempt.pk}/live/").content.decode()
    assert "<strong>Not scored</strong>" in live and "Not scored: the answer is too short" in live
    assert feedback in live
    assert "0 / 100" not in live and "<meter" not in live and "/ 100" not in live
    assert '<span class="muted">not scored</span>' in live  # the submissions table
    listing = client.get("/attempts/").content.decode()
    row = listing[listing.index("A hard deadline") :]
    assert '<span class="muted">not scored</span>' in row[: row.index("</tr>")]


def test_a_written_answer_is_typed_in_a_wrapping_textarea_with_its_expected_length(client, candidate):
    attempt = AttemptFactory(user=candidate, question=QuestionFactory(kind="system_design", evaluation_spec=STAR_SPEC))
    content = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert 'class="answer prose"' in content and 'wrap="soft"' in content
    assert "data-editor" not in content and "vendor/ace" not in content
    assert "Expected: 150-900 words, about 1-7 minutes to say." in content
    assert "Answers under 25 words are not scored." in content
    assert 'data-min-words="150" data-max-words="900" data-min-scored="25"' in content


def test_the_question_detail_api_gives_a_written_question_its_expected_words(api_client_for, db):
    client = api_client_for(UserFactory())
    prose = QuestionFactory(kind="behavioral", evaluation_spec=STAR_SPEC)
    coding = CodingQuestionFactory()
    assert client.get(f"/api/v1/questions/{prose.pk}/").json()["expected_words"] == {
        "min": 150,
        "max": 900,
        "min_scored": 25,
    }
    assert client.get(f"/api/v1/questions/{coding.pk}/").json()["expected_words"] is None
