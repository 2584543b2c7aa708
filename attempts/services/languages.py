"""The language an answer is written in: the one rule that submits, runs and drafts share.

A submit or a run without a language takes its attempt's (the last one named); either way the
language is checked here, once, before anything is written or queued.
"""

from __future__ import annotations

from typing import Any

from attempts.models import QuestionKind
from evaluation.languages import DEFAULT_LANGUAGE, LANGUAGES, language_available
from interviewprep.errors import InvalidInput


def answer_language_validate(*, language: Any, question_kind: str, runnable: bool = True) -> str:
    """`language` if an answer to a question of `question_kind` may be written in it, else
    InvalidInput (field "language"). A prose question takes only the default language (its
    answers are text, never run). With `runnable`, a coding answer's toolchain must be installed
    here (a submit or a run); a draft may be typed in any known language."""
    if not isinstance(language, str) or language not in LANGUAGES:
        raise InvalidInput(
            f"Unknown language {language!r}; answers may be written in {', '.join(LANGUAGES)}.", field="language"
        )
    if question_kind != QuestionKind.CODING:
        if language != DEFAULT_LANGUAGE:
            raise InvalidInput(
                f"A {QuestionKind(question_kind).label.lower()} question is answered in prose: "
                f"leave language out or send {DEFAULT_LANGUAGE!r}.",
                field="language",
            )
        return language
    if runnable and not language_available(language):
        raise InvalidInput(
            f"{LANGUAGES[language].name} answers cannot be run here: its toolchain is not installed.",
            field="language",
        )
    return language
