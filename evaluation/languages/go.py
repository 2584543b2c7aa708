"""Go: work in progress (the adapter's methods are filled in by its author)."""

from __future__ import annotations

from typing import ClassVar

from evaluation.languages.base import Language


class Go(Language):
    id: ClassVar[str] = "go"
    name: ClassVar[str] = "Go"
    ace_mode: ClassVar[str] = "ace/mode/golang"
    answer_file: ClassVar[str] = "answer.go"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/go", "version")
