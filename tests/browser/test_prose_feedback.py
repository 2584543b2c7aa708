"""A written answer in a real browser: typed in a wrapping textarea with a live word count, its
feedback quoting it back with the evidence marked, times in the candidate's zone, and an editor
for code that shows every character (an underscore included)."""

from __future__ import annotations

import base64
import re

import pytest

from attempts.models import Attempt, Preferences, Result, Submission, SubmissionStatus
from tests.attempts.test_prose_page import ANSWER, DETAILS, STAR_SPEC
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.browser

# "3 Dec 2026, 00:09 IST": what the server's `when` filter draws, and the script must draw alike.
WHEN = re.compile(r"^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}, \d{2}:\d{2} IST$")


def test_a_behavioural_answer_is_counted_as_typed_and_its_feedback_marks_the_evidence(candidate_page):
    user = UserFactory()
    Preferences.objects.create(user=user, time_zone="Asia/Kolkata")
    question = QuestionFactory(kind="behavioral", title="Too many alerts", evaluation_spec=STAR_SPEC)
    attempt = AttemptFactory(user=user, question=question)
    candidate = candidate_page(user)
    page = candidate.page
    candidate.goto(f"/attempts/{attempt.pk}/")

    count = page.locator("[data-word-count]")
    assert count.inner_text() == "0 words, about 0 minutes to say: too short to be scored."
    assert page.locator("[data-min-scored-words]").inner_text() == "Answers under 25 words are not scored."
    box = page.locator("textarea.prose")
    box.fill(" ".join(["word"] * 160))
    page.locator("[data-word-count][data-length-state=ok]").wait_for()
    assert count.inner_text() == "160 words, about 1.2 minutes to say: within the expected length."
    # A long story wraps inside the box instead of running off to the right.
    assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth", box.element_handle())
    # The draft's time, drawn by the script, reads as the server draws times.
    page.locator("[data-draft-status][data-draft-state=saved] time").wait_for()
    assert WHEN.match(page.locator("[data-draft-status] time").inner_text())

    submission = Submission.objects.create(attempt=attempt, answer=ANSWER, status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, score=62.5, max_score=100, feedback="Score 62.5/100.", details=DETAILS)
    version = attempt.version + 5
    Attempt.objects.filter(pk=attempt.pk).update(latest_submission=submission, status="completed", version=version)
    candidate.goto(f"/attempts/{attempt.pk}/?v={version}")  # past the cached copy of the draft
    marks = page.locator("[data-answer-echo] mark.evidence")
    assert marks.count() == 2
    assert marks.nth(0).locator(".evidence-label").inner_text() == "Situation"
    assert marks.nth(0).locator(".evidence-text").inner_text() == (
        "Our checkout service paged the on-call engineer forty times a week."
    )
    assert marks.nth(1).get_attribute("title") == "A result you can measure"
    assert marks.nth(1).locator(".evidence-label").inner_text() == "Result"
    assert page.locator("[data-answer-echo]").inner_text().replace("Situation ", "").replace("Result ", "") == ANSWER
    assert page.locator("[data-follow-up]").inner_text() == "Which alert did you keep, and why?"
    assert "✗ Missed" in page.locator(".criteria").inner_text()
    assert WHEN.match(page.locator("table.history time").first.inner_text())
    candidate.screenshot("prose-feedback")


def inked_pixels(candidate, png: bytes) -> int:
    """How many pixels of a screenshot are clearly not background (a one-pixel underscore is
    drawn anti-aliased, grey rather than black), counted by the browser
    itself (no image library needed): the screenshot is drawn on a canvas on a blank page."""
    blank = candidate.context.new_page()
    try:
        return blank.evaluate(
            """async (data) => {
                const image = new Image();
                image.src = "data:image/png;base64," + data;
                await image.decode();
                const canvas = document.createElement("canvas");
                canvas.width = image.width;
                canvas.height = image.height;
                const context = canvas.getContext("2d");
                context.drawImage(image, 0, 0);
                const pixels = context.getImageData(0, 0, image.width, image.height).data;
                let inked = 0;
                for (let i = 0; i < pixels.length; i += 4) if (pixels[i] + pixels[i + 1] + pixels[i + 2] < 600) inked++;
                return inked;
            }""",
            base64.b64encode(png).decode(),
        )
    finally:
        blank.close()


def test_the_code_editor_shows_an_underscore(candidate_page, adding_question):
    candidate = candidate_page()
    attempt = AttemptFactory(user=candidate.user, question=adding_question)
    page = candidate.page
    candidate.goto(f"/attempts/{attempt.pk}/")
    page.wait_for_selector(".ace_editor")
    page.evaluate("document.querySelector('[data-editor]').env.editor.setValue('brackets_balanced', -1)")
    page.locator(".ace_text-layer .ace_line").first.wait_for()
    # The underscore's own cell of the line, where Ace itself says it is (its neighbours are
    # letters, drawn in their own cells).
    cell = page.evaluate(
        """() => {
            const renderer = document.querySelector('[data-editor]').env.editor.renderer;
            renderer.updateFull(true);
            const at = renderer.textToScreenCoordinates(0, 'brackets'.length);
            return {x: at.pageX + 1, y: at.pageY, width: renderer.characterWidth - 2, height: renderer.lineHeight};
        }"""
    )
    assert inked_pixels(candidate, page.screenshot(clip=cell)) > 0, "the underscore is clipped"
    # And the line box holds the font's whole glyph box, whatever the glyph.
    room = page.evaluate(
        """() => {
            const editor = document.querySelector('[data-editor]').env.editor;
            const context = document.createElement('canvas').getContext('2d');
            context.font = getComputedStyle(editor.container).font;
            const underscore = context.measureText('_'), font = context.measureText('Hg_');
            const height = editor.renderer.lineHeight;
            const lead = (height - font.fontBoundingBoxAscent - font.fontBoundingBoxDescent) / 2;
            return height - (lead + font.fontBoundingBoxAscent + underscore.actualBoundingBoxDescent);
        }"""
    )
    assert room >= 0
