"""Reading the question bank from disk for tests; no database."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

BANK_DIR = Path(__file__).resolve().parents[2] / "questions"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def bank_files() -> list[Path]:
    return sorted(p for p in BANK_DIR.rglob("*") if p.suffix in (".yaml", ".yml"))


@cache
def _parsed() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) for path in bank_files())


def bank_questions(kind: str | None = None) -> list[dict[str, Any]]:
    # Deep copies, so a test that mutates a question cannot leak into the next one.
    return [copy.deepcopy(q) for q in _parsed() if kind is None or q["kind"] == kind]
