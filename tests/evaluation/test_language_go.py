"""The Go adapter's generated text and its reading of the compiler's output (no sandbox, no Go)."""

from __future__ import annotations

import os

from evaluation.languages.go import Go, go_type
from evaluation.languages.types import Signature, parse_type, signature_parse

GO = Go()
SUM_OF_LIST = signature_parse(
    {
        "function": "sum_of_list",
        "params": [{"name": "numbers", "type": "list<int>"}],
        "returns": "int",
        "summary": "Return the sum of the numbers.",
    }
)
ANSWER = "func sumOfList(numbers []int64) int64 {\n\tvar total int64\n\treturn total +\n}\n"
ANSWER_WITH_PACKAGE = "// The sum.\npackage main\n\nfunc sumOfList(numbers []int64) int64 {\n\treturn total\n}\n"

# Captured from go tool compile 1.19.8 on the answers above (answer.go with "package main" put first).
SYNTAX_ERROR = "answer.go:4:1: syntax error: unexpected }, expecting expression\n"
UNDEFINED = "answer.go:5:9: undefined: total\n"
# The same from go build (the fallback for cgo-built packages), which names ./answer.go.
UNDEFINED_GO_BUILD = "# command-line-arguments\n./answer.go:5:9: undefined: total\n"
MISSING = "expected func sumOfList(numbers []int64) int64:1: undefined: sumOfList\n"
WRONG_TYPE = (
    "expected func sumOfList(numbers []int64) int64:1: cannot use sumOfList (value of type func(numbers []int) int)"
    " as type func(numbers []int64) int64 in variable declaration\n"
)
MAIN_DECLARED = "harness.go:34:6: main redeclared in this block\n\tanswer.go:6:6: other declaration of main\n"
OTHER_PACKAGE = "harness.go:1:1: package main; expected solution\n"
OUT_OF_MEMORY = "fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw({0x4a1b2c?, 0x0?})\n"


def test_the_starter_of_sum_of_list_opens_with_the_documented_entry_point():
    assert GO.entry_point(SUM_OF_LIST) == "func sumOfList(numbers []int64) int64"
    starter = GO.starter(SUM_OF_LIST)
    assert starter.startswith("func sumOfList(numbers []int64) int64 {\n")
    assert "// Return the sum of the numbers." in starter
    assert "package" not in starter


def test_types_map_as_documented():
    assert go_type(parse_type("list<list<int>>")) == "[][]int64"
    assert go_type(parse_type("map<string,list<float>>")) == "map[string][]float64"
    assert go_type(parse_type("optional<string>")) == "*string"
    assert go_type(parse_type("list<optional<bool>>")) == "[]*bool"


def test_sources_put_the_answer_after_a_package_line_it_lacks():
    assert GO.answer_offset(ANSWER) == 1
    files = GO.sources(SUM_OF_LIST, ANSWER)
    assert set(files) == {"answer.go", "harness.go"}
    lines = files["answer.go"].splitlines()
    assert lines[0] == "package main"
    assert lines[GO.answer_offset(ANSWER) :] == ANSWER.splitlines()
    assert "const ipHarnessAnswerOffset = 1\n" in files["harness.go"]


def test_sources_keep_an_answer_that_has_its_package_line_as_it_is():
    assert GO.answer_offset(ANSWER_WITH_PACKAGE) == 0
    files = GO.sources(SUM_OF_LIST, ANSWER_WITH_PACKAGE)
    assert files["answer.go"] == ANSWER_WITH_PACKAGE
    assert "const ipHarnessAnswerOffset = 0\n" in files["harness.go"]


def test_the_harness_declares_only_prefixed_names():
    harness = GO.sources(SUM_OF_LIST, ANSWER)["harness.go"]
    declared, block = [], False
    for line in harness.splitlines():
        if line in ("var (", "const ("):
            block = True
        elif block and line == ")":
            block = False
        elif block and line.startswith("\t") and not line.startswith("\t//"):
            declared.append(line.split()[0])
        elif line.startswith(("func ", "var ", "const ", "type ")):
            declared.append(line.split()[1].split("(")[0])
    assert "main" in declared
    assert all(name == "main" or name.startswith("ipHarness") for name in declared), declared
    assert harness.rstrip().endswith("var ipHarnessEntry func(numbers []int64) int64 = sumOfList")


def test_the_harness_reads_and_writes_every_type_of_a_signature():
    signature = Signature(
        "f",
        (),
        parse_type("map<string,list<optional<float>>>"),
        "",
    )
    harness = GO.harness(signature, 0)
    for name in ("MapListOptFloat", "ListOptFloat", "OptFloat", "Float"):
        assert f"func ipHarnessWrite{name}(" in harness
    assert 'ipHarnessSort "sort"' in harness
    assert 'ipHarnessSort "sort"' not in GO.harness(SUM_OF_LIST, 0)


def test_a_compile_error_is_placed_in_the_candidates_own_text():
    assert GO.compile_error(SYNTAX_ERROR, ANSWER) == ("syntax error: unexpected }, expecting expression", 3, 1)
    assert GO.compile_error(UNDEFINED, ANSWER_WITH_PACKAGE) == ("undefined: total", 5, 9)
    assert GO.compile_error(UNDEFINED_GO_BUILD, ANSWER_WITH_PACKAGE) == ("undefined: total", 5, 9)


def test_an_error_in_the_harness_states_the_expected_declaration_without_a_line():
    message, line, column = GO.compile_error(MISSING, ANSWER)
    assert "func sumOfList(numbers []int64) int64" in message and "undefined: sumOfList" in message
    assert (line, column) == (None, None)
    message, line, column = GO.compile_error(WRONG_TYPE, ANSWER)
    assert message.startswith("the answer must declare func sumOfList(numbers []int64) int64")
    assert (line, column) == (None, None)


def test_an_answer_error_comes_before_a_harness_error():
    assert GO.compile_error(MISSING + SYNTAX_ERROR, ANSWER)[1:] == (3, 1)


def test_a_func_main_or_another_package_is_named_in_the_answer():
    answer = "func sumOfList(numbers []int64) int64 {\n\treturn 0\n}\n\nfunc main() {}\n"
    message, line, column = GO.compile_error(MAIN_DECLARED, answer)
    assert "main" in message and (line, column) == (5, 6)
    answer = "package solution\n\nfunc sumOfList(numbers []int64) int64 {\n\treturn 0\n}\n"
    message, line, column = GO.compile_error(OTHER_PACKAGE, answer)
    assert "package main" in message and (line, column) == (1, 1)


def test_running_out_of_memory_is_told_apart_from_other_crashes():
    assert GO.crash_reason(OUT_OF_MEMORY) == "memory"
    assert GO.crash_reason("fatal error: pageAlloc: out of memory\n") == "memory"
    stack_overflow = "runtime: goroutine stack exceeds 67108864-byte limit\nfatal error: stack overflow\n"
    assert GO.crash_reason(stack_overflow) is None
    assert GO.crash_reason("panic: boom\n") is None


def test_the_program_run_is_the_one_compiled_into_the_box(tmp_path):
    box = str(tmp_path)
    assert GO.executable(box) == os.path.realpath(os.path.join(box, "answer-program"))
    assert GO.run_argv(box, 256 + GO.memory_extra_mb) == [GO.executable(box), "256"]
    assert GO.compile_env(box)["GOCACHE"].startswith(box)
    assert GO.compile_env(box)["CGO_ENABLED"] == "0"
