"""JavaScript: work in progress (the adapter's methods are filled in by its author)."""

from __future__ import annotations

from typing import ClassVar

from evaluation.languages.base import Language


class JavaScript(Language):
    id: ClassVar[str] = "javascript"
    name: ClassVar[str] = "JavaScript"
    ace_mode: ClassVar[str] = "ace/mode/javascript"
    answer_file: ClassVar[str] = "answer.js"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/node", "--version")
