"""The harness programs, each a source file of its own language in `harness/`, filled in one way.

A placeholder is `@NAME@` (capitals, digits and underscores), which no harness's own code
writes. `fill` replaces every one in a single pass, so a value is never searched for more;
what a template needs from the answer's signature (readers and writers per type) is still
generated in Python by each language's module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

HARNESS_DIR = Path(__file__).with_name("harness")
PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")


class TemplateError(ValueError):
    """A template and the values given for it do not match."""


@cache
def template(name: str) -> str:
    """The text of `harness/<name>`, read once per process."""
    return (HARNESS_DIR / name).read_text(encoding="utf-8")


def fill(name: str, values: Mapping[str, str]) -> str:
    """`harness/<name>` with every placeholder replaced by its value. TemplateError when a
    placeholder is left without a value or a value names no placeholder of the template."""
    text = template(name)
    wanted = set(PLACEHOLDER.findall(text))
    missing, unknown = sorted(wanted - values.keys()), sorted(values.keys() - wanted)
    if missing or unknown:
        raise TemplateError(f"{name}: no value for {missing}; no placeholder for {unknown}")
    return PLACEHOLDER.sub(lambda match: values[match.group(1)], text)
