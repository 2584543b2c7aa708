"""Two answers compared line by line, as the compare page draws them.

Python's difflib, not a library: the page needs whole lines marked added, removed or unchanged,
with their numbers on each side; the template escapes the text like any other.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

LineKind = Literal["same", "removed", "added"]


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    old_number: int | None  # the line's number in the older answer, None for an added line
    new_number: int | None  # in the newer answer, None for a removed line
    text: str


@dataclass(frozen=True)
class AnswerDiff:
    lines: list[DiffLine]
    added: int
    removed: int

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed)


def answer_diff(*, old: str, new: str) -> AnswerDiff:
    """Every line of both answers in order, each marked; a changed line is its old version
    removed, then its new version added."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    lines: list[DiffLine] = []
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            lines.extend(
                DiffLine("same", old_start + i + 1, new_start + i + 1, old_lines[old_start + i])
                for i in range(old_end - old_start)
            )
            continue
        lines.extend(DiffLine("removed", i + 1, None, old_lines[i]) for i in range(old_start, old_end))
        lines.extend(DiffLine("added", None, i + 1, new_lines[i]) for i in range(new_start, new_end))
    added = sum(1 for line in lines if line.kind == "added")
    return AnswerDiff(lines=lines, added=added, removed=sum(1 for line in lines if line.kind == "removed"))
