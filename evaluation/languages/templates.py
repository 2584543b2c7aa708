"""The harness programs, each a source file of its own language in `harness/`, filled in one way.

A placeholder is `@NAME@` (capitals, digits and underscores), which no harness's own code
writes. `fill` replaces every one in a single pass, so a value is never searched for more;
what a template needs from the answer's signature (readers and writers per type) is still
generated in Python by each language's module. The limits every harness shares with the
Python side are one constant each in `base`; `fill` puts in those a template names (`LIMITS`).
`tests/evaluation/test_harness_templates.py` checks each filled template with its own toolchain.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from evaluation.languages.base import EXCERPT_CHARS, PRINT_LIMIT, VALUE_DEPTH_LIMIT, VALUE_LIMIT

HARNESS_DIR = Path(__file__).with_name("harness")
PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g}"


# Each shared limit as a template names it, with the MiB a harness's message says.
LIMITS: dict[str, str] = {
    "EXCERPT_CHARS": str(EXCERPT_CHARS),
    "PRINT_LIMIT": str(PRINT_LIMIT),
    "PRINT_LIMIT_MIB": _mib(PRINT_LIMIT),
    "VALUE_LIMIT": str(VALUE_LIMIT),
    "VALUE_LIMIT_MIB": _mib(VALUE_LIMIT),
    "VALUE_DEPTH_LIMIT": str(VALUE_DEPTH_LIMIT),
}


class TemplateError(ValueError):
    """A template and the values given for it do not match."""


@cache
def template(name: str) -> str:
    """The text of `harness/<name>`, read once per process."""
    return (HARNESS_DIR / name).read_text(encoding="utf-8")


def fill(name: str, values: Mapping[str, str]) -> str:
    """`harness/<name>` with every placeholder replaced: by its value in `values`, or by the
    shared limit of its name (`LIMITS`, which `values` may not name). TemplateError when a
    placeholder is left without a value or a value names no placeholder of the template."""
    text = template(name)
    wanted = set(PLACEHOLDER.findall(text))
    given = values.keys()
    missing = sorted(wanted - given - LIMITS.keys())
    unknown = sorted((given - wanted) | (given & LIMITS.keys()))
    if missing or unknown:
        raise TemplateError(f"{name}: no value for {missing}; no placeholder (or a shared limit's) for {unknown}")
    every = {**LIMITS, **values}
    return PLACEHOLDER.sub(lambda match: every[match.group(1)], text)
