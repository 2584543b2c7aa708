"""C++: work in progress (the adapter's methods are filled in by its author)."""

from __future__ import annotations

from typing import ClassVar

from evaluation.languages.base import Language


class Cpp(Language):
    id: ClassVar[str] = "cpp"
    name: ClassVar[str] = "C++"
    ace_mode: ClassVar[str] = "ace/mode/c_cpp"
    answer_file: ClassVar[str] = "answer.cpp"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/g++", "--version")
