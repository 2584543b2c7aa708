"""Java: work in progress (the adapter's methods are filled in by its author)."""

from __future__ import annotations

from typing import ClassVar

from evaluation.languages.base import Language


class Java(Language):
    id: ClassVar[str] = "java"
    name: ClassVar[str] = "Java"
    ace_mode: ClassVar[str] = "ace/mode/java"
    answer_file: ClassVar[str] = "Solution.java"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/javac", "-version")
