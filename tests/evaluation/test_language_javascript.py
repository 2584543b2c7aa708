"""The JavaScript adapter's generator: starter, sources, the harness's text, Node's errors.

Pure unit tests: nothing runs node or the sandbox (the bank test does that)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from evaluation.languages.javascript import JavaScript
from evaluation.languages.types import Signature, signature_parse

JS = JavaScript()
QUESTIONS = Path(__file__).resolve().parents[2] / "questions"

# `node --check answer.js` (Node 20.20) on "let x = 1;\n  x = ;\n", captured once.
NODE_CHECK_OUTPUT = """/box/answer.js:2
  x = ;
      ^

SyntaxError: Unexpected token ';'
    at wrapSafe (node:internal/modules/cjs/loader:1464:18)
    at checkSyntax (node:internal/main/check_syntax:78:3)

Node.js v20.20.2
"""

# The stack of the SyntaxError `new vm.Script(text, {filename: "answer.js"})` throws (as the
# harness sees it) for a line holding non-ASCII text before the error, and for a text that
# ends inside a function (no carets; the line after the last).
VM_UNICODE_OUTPUT = """answer.js:2
  const é = "é"; foo bar
                     ^^^

SyntaxError: Unexpected identifier 'bar'
    at new Script (node:vm:117:7)
"""
VM_END_OF_INPUT_OUTPUT = """answer.js:3



SyntaxError: Unexpected end of input
    at new Script (node:vm:117:7)
"""


def sum_of_list() -> Signature:
    data = yaml.safe_load((QUESTIONS / "coding" / "sum-of-list.yaml").read_text())
    return signature_parse(data["evaluation_spec"]["signature"])


def rich() -> Signature:
    return signature_parse(
        {
            "function": "echo_all",
            "params": [
                {"name": "table", "type": "map<string,list<optional<float>>>"},
                {"name": "word_list", "type": "list<string>"},
                {"name": "flag", "type": "bool"},
            ],
            "returns": "map<string,list<optional<float>>>",
            "summary": "Echo the table */ back.",
        }
    )


def test_entry_point_of_sum_of_list_is_the_public_one():
    assert JS.entry_point(sum_of_list()) == "function sumOfList(numbers)"


def test_starter_declares_the_entry_point_and_shows_the_summary():
    starter = JS.starter(sum_of_list())
    declaration = next(line for line in starter.splitlines() if line.startswith("function "))
    assert declaration == "function sumOfList(numbers) {"
    assert " * Return the sum of the numbers." in starter
    assert " * @param {number[]} numbers" in starter
    assert " * @returns {number}" in starter


def test_starter_types_and_a_summary_that_cannot_close_the_comment():
    starter = JS.starter(rich())
    assert "function echoAll(table, wordList, flag) {" in starter
    assert "@param {Object<string, (number|null)[]>} table" in starter
    assert "@param {string[]} wordList" in starter
    assert "Echo the table * / back." in starter
    assert starter.count("*/") == 1


def test_sources_put_the_answer_at_its_offset():
    answer = "function sumOfList(numbers) {\n  return 0;\n}\n"
    files = JS.sources(sum_of_list(), answer)
    assert set(files) == {"answer.js", "harness.js"}
    offset = JS.answer_offset(answer)
    assert offset == 0
    assert files["answer.js"].splitlines()[offset:] == answer.splitlines()


def test_harness_is_generated_from_the_signature():
    harness = JS.harness(rich())
    assert "@" + "FUNCTION@" not in harness and "@READERS@" not in harness and "@WRITERS@" not in harness
    assert 'const FUNCTION = "echoAll";' in harness
    for name in ("read_map_list_optional_float", "read_list_optional_float", "read_optional_float", "read_float",
                 "read_list_string", "read_string", "read_bool"):  # fmt: skip
        assert harness.count(f"function {name}() {{") == 1, name
    for name in ("write_map_list_optional_float", "write_list_optional_float", "write_optional_float", "write_float"):
        assert harness.count(f"function {name}(v) {{") == 1, name
    assert "[read_map_list_optional_float(), read_list_string(), read_bool()]" in harness
    assert "write_map_list_optional_float(value)" in harness
    assert "read_int" not in JS.harness(rich()) and "function read_int()" in JS.harness(sum_of_list())


def test_compile_error_maps_node_check_output_to_the_answers_line_and_column():
    assert JS.compile_error(NODE_CHECK_OUTPUT, "let x = 1;\n  x = ;\n") == ("SyntaxError: Unexpected token ';'", 2, 7)


def test_compile_error_counts_characters_not_bytes():
    message, line, column = JS.compile_error(VM_UNICODE_OUTPUT, '// é\n  const é = "é"; foo bar\n')
    assert (message, line, column) == ("SyntaxError: Unexpected identifier 'bar'", 2, 22)


def test_compile_error_at_the_end_of_the_text_has_a_line_and_no_column():
    assert JS.compile_error(VM_END_OF_INPUT_OUTPUT, "function f() {\n  return 1;\n") == (
        "SyntaxError: Unexpected end of input",
        3,
        None,
    )


def test_compile_error_without_a_position_keeps_the_first_line():
    assert JS.compile_error("node: bad option: --nope\n", "") == ("node: bad option: --nope", None, None)


def test_run_argv_starts_the_real_node_with_the_heap_limit():
    argv = JS.run_argv("/box", 256)
    assert argv[0] == JS.executable("/box") == os.path.realpath("/usr/bin/node")
    assert os.path.isabs(argv[0])
    assert "--max-old-space-size=256" in argv
    assert argv[-1] == "/box/harness.js"
    assert JS.compiled is False and JS.memory_rlimit == "data"


def test_crash_reason_names_v8s_out_of_memory():
    stderr = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"
    assert JS.crash_reason(stderr) == "memory"
    assert JS.crash_reason("Segmentation fault\n") is None
