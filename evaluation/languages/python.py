"""Python: the answer runs in the box's warden itself, `evaluation/sandbox/_warden.py`."""

from __future__ import annotations

import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.types import Signature, Type

_NAMES = {"int": "int", "float": "float", "string": "str", "bool": "bool"}
# A JSON string (whose escapes Python reads alike; maybe cut short), or a word JSON writes
# otherwise than Python.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|-?\bInfinity\b|\b(?:true|false|null|NaN)\b')
_PYTHON_WORDS = {"true": "True", "false": "False", "null": "None", "NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}


def python_type(kind: Type) -> str:
    if kind.kind == "list":
        return f"list[{python_type(kind.item)}]"  # type: ignore[arg-type]
    if kind.kind == "map":
        return f"dict[str, {python_type(kind.item)}]"  # type: ignore[arg-type]
    if kind.kind == "optional":
        return f"{python_type(kind.item)} | None"  # type: ignore[arg-type]
    return _NAMES[kind.kind]


class Python(Language):
    id: ClassVar[str] = "python"
    name: ClassVar[str] = "Python"
    ace_mode: ClassVar[str] = "ace/mode/python"
    answer_file: ClassVar[str] = "<string>"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/python3", "--version")
    in_process: ClassVar[bool] = True
    compiled: ClassVar[bool] = False
    comment: ClassVar[str] = "#"

    def entry_name(self, signature: Signature) -> str:
        return signature.function

    def param_name(self, name: str) -> str:
        return name

    def written(self, json_text: str) -> str:
        """`True`, `None`, `[1, 2]`, `{"a": 1.5}`: JSON's words as Python's, strings untouched."""
        return _JSON_TOKEN.sub(lambda match: _PYTHON_WORDS.get(match.group(0), match.group(0)), json_text)

    def entry_point(self, signature: Signature) -> str:
        params = ", ".join(f"{p.name}: {python_type(p.type)}" for p in signature.params)
        return f"def {signature.function}({params}) -> {python_type(signature.returns)}"

    def starter(self, signature: Signature) -> str:
        summary = signature.summary.replace('"""', "'''")
        return f'{self.entry_point(signature)}:\n    """{summary}"""\n    pass\n'
