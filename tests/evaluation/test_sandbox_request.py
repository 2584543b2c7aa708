"""The box's request has one list of keys: the dataclasses' fields are what `_warden.py` reads.

`_warden.py` runs standalone in the box and reads a plain dict, so nothing but this test
holds its keys to `BoxRequest` and `ProgramExec`.
"""

from __future__ import annotations

import ast
import dataclasses
import marshal
from pathlib import Path

import pytest

from evaluation.sandbox.request import BoxRequest, ProgramExec

pytestmark = pytest.mark.nodb

IN_BOX = Path(__file__).resolve().parents[2] / "evaluation" / "sandbox" / "_warden.py"


def _read_key(node: ast.AST) -> tuple[ast.expr, str] | None:
    """(the dict, the key) of `d["key"]` or `d.get("key", ...)`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.func.value, node.args[0].value
    return None


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def keys_read() -> tuple[set[str], set[str]]:
    """The request's keys and its `exec` part's, as `_warden.py` reads them (`request`, and
    `program` or `request["exec"]` for the part)."""
    request: set[str] = set()
    program: set[str] = set()
    for node in ast.walk(ast.parse(IN_BOX.read_text(encoding="utf-8"))):
        found = _read_key(node)
        if found is None:
            continue
        container, key = found
        inner = _read_key(container)
        if _is_name(container, "request"):
            request.add(key)
        elif _is_name(container, "program") or (inner is not None and _is_name(inner[0], "request")):
            assert inner is None or inner[1] == "exec", ast.unparse(node)
            program.add(key)
    return request, program


def names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_every_key_the_box_reads_is_a_field_and_every_field_is_read():
    request, program = keys_read()
    assert request == names(BoxRequest)
    assert program == names(ProgramExec)


def test_the_message_is_a_plain_dict_of_those_keys():
    program = ProgramExec(
        argv=["/box/a"], env={}, cwd="/box", rules=[["/usr", "r"]], memory="as", processes=1, file_bytes=1,
        results_on_stdout=True,
    )  # fmt: skip
    framed = BoxRequest(exec=program, tests=[b"1"], more=2).framed()
    message = marshal.loads(framed[4:])
    assert int.from_bytes(framed[:4], "little") == len(framed) - 4
    assert set(message) == names(BoxRequest) and set(message["exec"]) == names(ProgramExec)
    assert message["tests"] == [b"1"] and message["more"] == 2 and message["fresh_module"] is True
