"""A coding question's function, declared once in language-neutral types.

A question's `evaluation_spec.signature` names the function and types its parameters and
return value; every language's starter code and harness are generated from it, and the
question's tests (plain JSON values) are checked against it when the bank loads.

Types, written as text in the question file:

    int          a 64-bit signed integer
    float        a double
    string       Unicode text
    bool
    list<T>      an ordered list
    map<string,T>   text keys (JSON objects have no others)
    optional<T>  T or null

Arguments reach a compiled harness as one line of space-separated tokens, read by the
declared types, so no harness needs a JSON parser (see `encode_tests`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
SCALARS = ("int", "float", "string", "bool")
_TOKEN = re.compile(r"\s*([A-Za-z]+|<|>|,)")
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


class SignatureError(ValueError):
    """A signature or a value that does not fit it; the message says which part and why."""


@dataclass(frozen=True)
class Type:
    kind: str  # one of SCALARS, or list, map, optional
    item: Type | None = None  # the element of a list, the value of a map, the T of optional<T>

    def __str__(self) -> str:
        if self.item is None:
            return self.kind
        return f"map<string,{self.item}>" if self.kind == "map" else f"{self.kind}<{self.item}>"


@dataclass(frozen=True)
class Param:
    name: str  # snake_case, as in the Python starter; other languages camelCase it
    type: Type


@dataclass(frozen=True)
class Signature:
    function: str  # snake_case
    params: tuple[Param, ...]
    returns: Type
    summary: str  # one line: what to return; every starter shows it as a comment


def parse_type(text: str) -> Type:
    tokens: list[str] = []
    position = 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            raise SignatureError(f"type {text!r}: cannot read {text[position:]!r}")
        tokens.append(match.group(1))
        position = match.end()

    def read(at: int) -> tuple[Type, int]:
        if at >= len(tokens):
            raise SignatureError(f"type {text!r} ends too early")
        name = tokens[at]
        if name in SCALARS:
            return Type(name), at + 1
        if name not in ("list", "map", "optional"):
            raise SignatureError(f"type {text!r}: unknown type {name!r}")
        if tokens[at + 1 : at + 2] != ["<"]:
            raise SignatureError(f"type {text!r}: {name} needs <...>")
        at += 2
        if name == "map":
            if tokens[at : at + 2] != ["string", ","]:
                raise SignatureError(f"type {text!r}: a map's keys must be string: map<string,T>")
            at += 2
        item, at = read(at)
        if tokens[at : at + 1] != [">"]:
            raise SignatureError(f"type {text!r}: missing '>'")
        return Type(name, item), at + 1

    parsed, end = read(0)
    if end != len(tokens):
        raise SignatureError(f"type {text!r}: unexpected {' '.join(tokens[end:])!r}")
    return parsed


def signature_parse(data: Any) -> Signature:
    """`data` is `evaluation_spec.signature`: {function, params: [{name, type}], returns, summary}."""
    if not isinstance(data, dict):
        raise SignatureError("signature must be a mapping with function, params, returns and summary")
    unknown = set(data) - {"function", "params", "returns", "summary"}
    if unknown:
        raise SignatureError(f"signature has unknown keys {sorted(unknown)}")
    function = data.get("function")
    if not isinstance(function, str) or not _IDENTIFIER.fullmatch(function):
        raise SignatureError("signature.function must be a snake_case name such as sum_of_list")
    params = data.get("params")
    if not isinstance(params, list):
        raise SignatureError("signature.params must be a list of {name, type}")
    parsed: list[Param] = []
    for position, param in enumerate(params):
        if not isinstance(param, dict) or set(param) != {"name", "type"}:
            raise SignatureError(f"signature.params[{position}] must be {{name, type}}")
        name, kind = param["name"], param["type"]
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise SignatureError(f"signature.params[{position}].name must be a snake_case name")
        if any(p.name == name for p in parsed) or name == function:
            raise SignatureError(f"signature.params[{position}].name {name!r} is used twice")
        if not isinstance(kind, str):
            raise SignatureError(f"signature.params[{position}].type must be text such as list<int>")
        parsed.append(Param(name, parse_type(kind)))
    returns = data.get("returns")
    if not isinstance(returns, str):
        raise SignatureError("signature.returns must be text such as int")
    summary = data.get("summary", "")
    if not isinstance(summary, str) or "\n" in summary or len(summary) > 200:
        raise SignatureError("signature.summary must be one line of at most 200 characters")
    return Signature(function, tuple(parsed), parse_type(returns), summary.strip())


def camel(name: str) -> str:
    """sum_of_list -> sumOfList: the spelling of JavaScript, Java, C++ and Go."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def value_problem(kind: Type, value: Any, where: str = "value") -> str | None:
    """Why `value` (plain JSON) is not a `kind`, or None when it is."""
    if kind.kind == "optional":
        return None if value is None else value_problem(kind.item, value, where)  # type: ignore[arg-type]
    if kind.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{where} must be an integer"
        return None if INT_MIN <= value <= INT_MAX else f"{where} does not fit in 64 bits"
    if kind.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{where} must be a number"
        return None if math.isfinite(value) else f"{where} must be finite"
    if kind.kind == "string":
        return None if isinstance(value, str) else f"{where} must be text"
    if kind.kind == "bool":
        return None if isinstance(value, bool) else f"{where} must be true or false"
    if kind.kind == "list":
        if not isinstance(value, list):
            return f"{where} must be a list"
        return next(
            (p for n, item in enumerate(value) if (p := value_problem(kind.item, item, f"{where}[{n}]"))),  # type: ignore[arg-type]
            None,
        )
    if kind.kind == "map":
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            return f"{where} must be a mapping with text keys"
        return next(
            (p for key, item in value.items() if (p := value_problem(kind.item, item, f"{where}[{key!r}]"))),  # type: ignore[arg-type]
            None,
        )
    raise SignatureError(f"unknown type {kind}")


def args_problem(signature: Signature, args: Sequence[Any]) -> str | None:
    """Why `args` (one test's positional arguments) do not fit the signature, or None."""
    if len(args) != len(signature.params):
        return f"{len(signature.params)} arguments are expected, not {len(args)}"
    return next(
        (
            p
            for param, value in zip(signature.params, args, strict=True)
            if (p := value_problem(param.type, value, param.name))
        ),
        None,
    )


def _tokens(kind: Type, value: Any, out: list[str]) -> None:
    if kind.kind == "optional":
        if value is None:
            out.append("0")
        else:
            out.append("1")
            _tokens(kind.item, value, out)  # type: ignore[arg-type]
    elif kind.kind == "int":
        out.append(str(int(value)))
    elif kind.kind == "float":
        out.append(repr(float(value)))
    elif kind.kind == "bool":
        out.append("1" if value else "0")
    elif kind.kind == "string":
        # Hex of the UTF-8 bytes after an "x", so a token never holds a space or a newline.
        out.append("x" + value.encode("utf-8", "surrogatepass").hex())
    elif kind.kind == "list":
        out.append(str(len(value)))
        for item in value:
            _tokens(kind.item, item, out)  # type: ignore[arg-type]
    elif kind.kind == "map":
        out.append(str(len(value)))
        for key in sorted(value):
            _tokens(Type("string"), key, out)
            _tokens(kind.item, value[key], out)  # type: ignore[arg-type]
    else:
        raise SignatureError(f"unknown type {kind}")


def encode_tests(signature: Signature, tests_args: Sequence[Sequence[Any]]) -> bytes:
    """One line for a compiled harness: the number of tests, then each test's arguments.

    int: decimal; float: Python's repr (strtod, Double.parseDouble, ParseFloat and Number all
    read it); bool: 1 or 0; string: "x" then the hex of its UTF-8 bytes; list<T>: its length,
    then the items; map<string,T>: its size, then key and value pairs sorted by key;
    optional<T>: 0 for null, else 1 then the value. Tokens are separated by one space.
    Raises SignatureError when a test's arguments do not fit the signature.
    """
    out = [str(len(tests_args))]
    for args in tests_args:
        problem = args_problem(signature, args)
        if problem:
            raise SignatureError(problem)
        for param, value in zip(signature.params, args, strict=True):
            _tokens(param.type, value, out)
    return (" ".join(out) + "\n").encode("ascii")
