"""The languages an answer may be written in, and what each one's toolchain is here.

Adding a language is one class in this package (see `base.Language`), its harness's template
in `harness/`, and one line in `LANGUAGES`; its starters and harness come from each question's
signature (`types.py`).
Versions are found once per process (a worker does it at start) by asking each toolchain;
one that is missing or does not start is listed as unavailable, and a submission in it is
refused before anything is queued.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from evaluation.languages.base import Language
from evaluation.languages.cpp import Cpp
from evaluation.languages.go import Go
from evaluation.languages.java import Java
from evaluation.languages.javascript import JavaScript
from evaluation.languages.python import Python
from evaluation.languages.types import Signature, SignatureError, encode_tests, signature_parse

DEFAULT_LANGUAGE = "python"
LANGUAGES: dict[str, Language] = {language.id: language for language in (Python(), JavaScript(), Java(), Cpp(), Go())}


@cache
def language_versions() -> dict[str, str | None]:
    """Each language's toolchain version here, None when it is unavailable. Asked once per
    process tree: a worker asks in its parent at start and its children inherit the answer."""
    return {language_id: language.version() for language_id, language in LANGUAGES.items()}


def languages_status() -> list[dict[str, Any]]:
    versions = language_versions()
    return [
        {
            "id": language_id,
            "name": language.name,
            "version": versions[language_id],
            "available": versions[language_id] is not None,
        }
        for language_id, language in LANGUAGES.items()
    ]


def language_about(language_id: str) -> dict[str, Any]:
    """{"id", "name", "version"}: what a result says ran, as this process finds its toolchain
    (version None when it is missing; name the id for an id it does not know)."""
    language = LANGUAGES.get(language_id)
    version = language_versions().get(language_id)
    return {"id": language_id, "name": language.name if language else language_id, "version": version}


def language_get(language_id: str) -> Language:
    """The language, or KeyError."""
    return LANGUAGES[language_id]


def language_available(language_id: str) -> bool:
    return language_id in LANGUAGES and language_versions().get(language_id) is not None


def starter_codes(spec: dict[str, Any]) -> dict[str, str]:
    """Every language's starter for a coding question's spec (its `signature`)."""
    signature = signature_parse(spec["signature"])
    return {language_id: language.starter(signature) for language_id, language in LANGUAGES.items()}


__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "Language",
    "Signature",
    "SignatureError",
    "encode_tests",
    "language_about",
    "language_available",
    "language_get",
    "language_versions",
    "languages_status",
    "signature_parse",
    "starter_codes",
]
