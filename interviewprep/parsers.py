"""The API's one JSON parser (settings.REST_FRAMEWORK's DEFAULT_PARSER_CLASSES)."""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _depth_check(text: str) -> None:
    """Python's decoder recurses once per level and dies of RecursionError near 1,000; count the
    levels first, in C-speed regexes, with strings (whose brackets are not nesting) left out."""
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub("", text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels.")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone UTF-16 surrogate (`"\\ud800"` decodes to one) in a key or a string: no text
    column, no UTF-8 encoder and no JSON peer (RFC 8259 §8.2) accepts it."""
    if isinstance(value, str):
        found = _LONE_SURROGATE.search(value)
        return found.group() if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            if (found := _lone_surrogate(key)) or (found := _lone_surrogate(item)):
                return found
    if isinstance(value, list):
        for item in value:
            if found := _lone_surrogate(item):
                return found
    return None


class BoundedJSONParser(JSONParser):
    """DRF's JSONParser (NaN and Infinity refused), with the nesting bounded and lone surrogates
    refused, so no body can reach a view that the database or an encoder would choke on."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        _depth_check(text)
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        if found := _lone_surrogate(data):
            raise ParseError(f"a string contains invalid characters (a lone surrogate, U+{ord(found):04X}).")
        return data
