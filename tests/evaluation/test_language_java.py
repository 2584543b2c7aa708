"""The Java adapter's generator: entry point, starter, sources and compiler errors (no JDK run)."""

from __future__ import annotations

import pytest

from evaluation.languages.java import HARNESS_CLASS, JAVA, JAVAC_ARCHIVE, Java, java_type
from evaluation.languages.types import parse_type, signature_parse

pytestmark = pytest.mark.nodb

JAVA_LANGUAGE = Java()
SUM_OF_LIST = signature_parse(
    {
        "function": "sum_of_list",
        "params": [{"name": "numbers", "type": "list<int>"}],
        "returns": "int",
        "summary": "Return the sum of the numbers.",
    }
)
ANSWER = "class Solution {\n    long sumOfList(long[] numbers) {\n        long s = 0\n        return s;\n    }\n}\n"

# Captured once from javac 17 (compile_argv) on the answers named.
MISSING_SEMICOLON = "Solution.java:4: error: ';' expected\n        long s = 0\n                  ^\n1 error\n"
UNKNOWN_METHOD = (
    'Solution.java:4: error: cannot find symbol\n\tString s = "é"; return s.foo();\n'
    "\t                        ^\n  symbol:   method foo()\n  location: variable s of type String\n1 error\n"
)
WRONG_SIGNATURE = (  # class Solution { int sumOfList(int[] numbers) { return 0; } }
    "InterviewPrepMain.java:230: error: incompatible types: long[] cannot be converted to int[]\n"
    "    static Solution make() { return new Solution(); } static long call(Solution solution, long[] a0)"
    " throws Throwable { return solution.sumOfList(a0); }"
    " // Solution must declare: class Solution { long sumOfList(long[] numbers) }\n"
    + " " * 146
    + "^\nNote: Some messages have been simplified; recompile with -Xdiags:verbose to get full output\n1 error\n"
)


def test_entry_point_is_the_public_contract():
    assert JAVA_LANGUAGE.entry_point(SUM_OF_LIST) == "class Solution { long sumOfList(long[] numbers) }"


def test_starter_declares_the_entry_point_and_shows_the_summary():
    starter = JAVA_LANGUAGE.starter(SUM_OF_LIST)
    assert starter.startswith("class Solution {\n")
    assert "    // Return the sum of the numbers.\n" in starter
    assert "    long sumOfList(long[] numbers) {\n        return 0;\n" in starter


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int", "long"),
        ("float", "double"),
        ("string", "String"),
        ("bool", "boolean"),
        ("list<int>", "long[]"),
        ("list<list<int>>", "long[][]"),
        ("list<string>", "String[]"),
        ("list<optional<int>>", "Long[]"),
        ("optional<int>", "Long"),
        ("optional<list<int>>", "long[]"),
        ("map<string,int>", "Map<String, Long>"),
        ("map<string,list<bool>>", "Map<String, boolean[]>"),
        ("list<map<string,float>>", "List<Map<String, Double>>"),
        ("list<list<map<string,int>>>", "List<List<Map<String, Long>>>"),
    ],
)
def test_type_mapping(text, expected):
    assert java_type(parse_type(text)) == expected


def test_sources_put_the_answer_at_its_offset():
    sources = JAVA_LANGUAGE.sources(SUM_OF_LIST, ANSWER)
    assert set(sources) == {"Solution.java", f"{HARNESS_CLASS}.java"}
    offset = JAVA_LANGUAGE.answer_offset(ANSWER)
    assert offset == 1
    lines = sources["Solution.java"].splitlines(keepends=True)
    assert "".join(lines[offset:]) == ANSWER
    assert lines[0].startswith("import java.util.*;")


def test_harness_is_not_the_answers_class_and_calls_the_entry_point():
    harness = JAVA_LANGUAGE.sources(SUM_OF_LIST, ANSWER)[f"{HARNESS_CLASS}.java"]
    assert HARNESS_CLASS != "Solution"
    assert f"final class {HARNESS_CLASS} " in harness
    assert "return solution.sumOfList(a0);" in harness
    assert "static final int ANSWER_OFFSET = 1;" in harness


def test_compile_error_maps_line_and_caret_column_to_the_answer():
    assert JAVA_LANGUAGE.compile_error(MISSING_SEMICOLON, ANSWER) == ("';' expected", 3, 19)


def test_compile_error_counts_a_tab_as_one_column_and_names_the_symbol():
    assert JAVA_LANGUAGE.compile_error(UNKNOWN_METHOD, ANSWER) == ("cannot find symbol: method foo()", 3, 26)


def test_an_error_in_the_harness_states_the_expected_declaration_without_a_line():
    message, line, column = JAVA_LANGUAGE.compile_error(WRONG_SIGNATURE, ANSWER)
    assert "class Solution { long sumOfList(long[] numbers) }" in message
    assert "long[] cannot be converted to int[]" in message
    assert (line, column) == (None, None)


def test_unrecognised_compiler_output_is_its_first_line():
    assert JAVA_LANGUAGE.compile_error("error: out of memory\nmore\n", ANSWER) == ("error: out of memory", None, None)


def test_the_box_runs_only_the_real_java_binary():
    argv = JAVA_LANGUAGE.run_argv("/box", 256 + JAVA_LANGUAGE.memory_extra_mb)
    assert argv[0] == JAVA == JAVA_LANGUAGE.executable("/box")
    assert "-Xmx256m" in argv  # the question's share of the box's limit
    assert argv[-3:] == ["-cp", "/box", HARNESS_CLASS]
    assert "/etc/java-17-openjdk" in JAVA_LANGUAGE.host_paths
    assert JAVA_LANGUAGE.memory_rlimit == "data"


def test_compiles_map_the_prebuilt_javac_archive_only_when_there_is_one():
    assert not any("SharedArchiveFile" in arg for arg in JAVA_LANGUAGE.compile_argv("/box"))
    prebuilt = Java()
    prebuilt.use_prebuilt("/opt/java-prebuilt")
    assert "/opt/java-prebuilt" in prebuilt.host_paths
    argv = prebuilt.compile_argv("/box")
    assert f"-J-XX:SharedArchiveFile=/opt/java-prebuilt/{JAVAC_ARCHIVE}" in argv
    assert "-J-Xshare:auto" in argv  # an archive that does not fit is ignored, never fatal
    assert argv[-2:] == ["Solution.java", f"{HARNESS_CLASS}.java"]


def test_the_archive_is_dumped_by_a_compile_with_the_compiles_own_flags():
    prebuilt = Java()
    dump, check = prebuilt.prebuild_argvs("/d")
    assert dump[1] == f"-J-XX:ArchiveClassesAtExit=/d/{JAVAC_ARCHIVE}"
    compile_flags = JAVA_LANGUAGE.compile_argv("/box")[1:-4]  # less javac, -d box and the files
    assert dump[2:-4] == compile_flags
    assert dump[-4:] == ["-d", "/d/classes", "/d/Solution.java", f"/d/{HARNESS_CLASS}.java"]
    assert check == ["/usr/bin/test", "-s", f"/d/{JAVAC_ARCHIVE}"]
    files = prebuilt.prebuild_files()
    assert set(files) == {"Solution.java", f"{HARNESS_CLASS}.java"}
    harness = files[f"{HARNESS_CLASS}.java"]
    assert "Map<String, Long[]>" in harness and "long[][]" in harness and "List<Map<String, Long>>" in harness


def test_crash_reason_recognises_the_jvm_running_out_of_memory():
    assert JAVA_LANGUAGE.crash_reason('Exception in thread "x" java.lang.OutOfMemoryError: Java heap space') == "memory"
    assert JAVA_LANGUAGE.crash_reason("os::commit_memory(0x7f, 73728, 0) failed; error='Not enough space'") == "memory"
    assert JAVA_LANGUAGE.crash_reason("Segmentation fault") is None


def test_the_version_is_the_jdks_own_and_starts_no_jvm(monkeypatch):
    import subprocess

    from evaluation.languages.java import JAVAC

    asked = subprocess.run([JAVAC, "-version"], capture_output=True, text=True, check=True)
    started = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: started.append(a))
    version = Java().version()
    assert started == []
    assert asked.stdout.strip() == f"javac {version}"


def test_a_jdk_without_its_compiler_is_unavailable(monkeypatch):
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if path.endswith("/javac") else real(path, mode))
    assert Java().version() is None
