"""The C++ adapter's generator: entry points, starters, where the answer goes, and how g++'s
first error maps back to the candidate's own line and column. Pure: no compiler, no sandbox."""

# ruff: noqa: E501 - compiler output is pasted verbatim, long lines and all

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evaluation.languages.cpp import HARNESS_FILE, MUST_DEFINE, PRELUDE_NAME, SUPPORT_OBJECT, Cpp
from evaluation.languages.types import signature_parse

REPO = Path(__file__).resolve().parents[2]
CPP = Cpp()
SUM_OF_LIST = signature_parse(
    {"function": "sum_of_list", "params": [{"name": "numbers", "type": "list<int>"}], "returns": "int",
     "summary": "Return the sum of the numbers."}
)  # fmt: skip
ANSWER = "long long sumOfList(const vector<long long>& numbers) {\n    return 0;\n}\n"


def bank_signatures():
    for path in sorted((REPO / "questions" / "coding").glob("*.yaml")):
        yield path.stem, signature_parse(yaml.safe_load(path.read_text())["evaluation_spec"]["signature"])


def test_entry_point_and_starter_of_sum_of_list():
    entry = "long long sumOfList(const std::vector<long long>& numbers)"
    assert CPP.entry_point(SUM_OF_LIST) == entry
    assert CPP.starter(SUM_OF_LIST) == entry + " {\n    // Return the sum of the numbers.\n    return {};\n}\n"


def test_types_map_as_documented():
    signature = signature_parse(
        {"function": "every_type", "returns": "map<string,list<optional<float>>>", "summary": "",
         "params": [{"name": "count", "type": "int"}, {"name": "ratio", "type": "float"},
                    {"name": "label", "type": "string"}, {"name": "flag", "type": "bool"},
                    {"name": "grid", "type": "list<list<int>>"}, {"name": "maybe", "type": "optional<int>"},
                    {"name": "names", "type": "map<string,bool>"}]}
    )  # fmt: skip
    assert CPP.entry_point(signature) == (
        "std::map<std::string, std::vector<std::optional<double>>> everyType(long long count, double ratio, "
        "std::string label, bool flag, const std::vector<std::vector<long long>>& grid, "
        "const std::optional<long long>& maybe, const std::map<std::string, bool>& names)"
    )


def test_sources_put_the_answer_at_its_offset_and_include_it_once():
    files = CPP.sources(SUM_OF_LIST, ANSWER)
    assert set(files) == {CPP.answer_file, HARNESS_FILE}
    offset = CPP.answer_offset(ANSWER)
    assert offset == 0
    assert files[CPP.answer_file].splitlines()[offset:] == ANSWER.splitlines()
    harness = files[HARNESS_FILE]
    assert harness.count('#include "answer.cpp"') == 1
    assert ANSWER not in harness
    # The expected declaration is what the harness's checks say when the answer lacks it.
    assert f"{MUST_DEFINE}`long long sumOfList(const std::vector<long long>& numbers)`" in harness


@pytest.mark.parametrize(("slug", "signature"), list(bank_signatures()))
def test_every_bank_question_has_a_harness_and_starter(slug, signature):
    starter = CPP.starter(signature)
    assert starter.startswith(CPP.entry_point(signature) + " {")
    harness = CPP.sources(signature, starter)[HARNESS_FILE]
    assert f"::{CPP.entry_name(signature)}(" in harness
    assert "@" not in harness.replace("__asm__", "")  # every placeholder was filled
    assert (REPO / "questions" / "references" / "cpp" / f"{slug}.cpp").is_file()


def test_prebuilt_directory_switches_to_the_precompiled_prelude_and_object():
    prebuilt = Cpp()
    prebuilt.use_prebuilt("/opt/cpp-prebuilt")
    assert prebuilt.host_paths == ("/opt/cpp-prebuilt",)
    assert CPP.host_paths == ()
    argv = prebuilt.compile_argv("/box")
    assert argv[argv.index("-I") + 1] == "/opt/cpp-prebuilt"
    assert f"/opt/cpp-prebuilt/{SUPPORT_OBJECT}" in argv
    harness = prebuilt.sources(SUM_OF_LIST, ANSWER)[HARNESS_FILE]
    assert harness.splitlines()[1] == f"#include <{PRELUDE_NAME}>"  # first, as a PCH must be
    assert set(prebuilt.prebuild_files()) == {PRELUDE_NAME, "interviewprep_support.cpp"}
    assert [argv[-1] for argv in prebuilt.prebuild_argvs("/d")] == [
        f"/d/{PRELUDE_NAME}", "/d/interviewprep_support.cpp",
    ]  # fmt: skip
    assert "-I" not in CPP.compile_argv("/box")


def test_executable_is_the_real_path_run_alone(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert CPP.executable(str(tmp_path / "link")) == str(tmp_path / "real" / "program")
    assert CPP.run_argv(str(tmp_path / "real"), 256) == [str(tmp_path / "real" / "program")]


# Real g++ 12 output, captured once from a compile of each answer below.
SYNTAX_ANSWER = """long long sumOfList(const vector<long long>& numbers) {
    long long total = 0
    for (auto n : numbers) total += n;
    return total;
}
"""
SYNTAX_OUTPUT = """In file included from harness.cpp:141:
answer.cpp: In function ‘long long int sumOfList(const std::vector<long long int>&)’:
answer.cpp:3:5: error: expected ‘,’ or ‘;’ before ‘for’
    3 |     for (auto n : numbers) total += n;
      |     ^~~
"""

UNICODE_ANSWER = """// héllo wörld
long long sumOfList(const vector<long long>& numbers) { string s = "é"; return s.size() + undefined_thing; }
"""
UNICODE_OUTPUT = """In file included from harness.cpp:141:
answer.cpp: In function ‘long long int sumOfList(const std::vector<long long int>&)’:
answer.cpp:2:92: error: ‘undefined_thing’ was not declared in this scope
    2 | long long sumOfList(const vector<long long>& numbers) { string s = "é"; return s.size() + undefined_thing; }
      |                                                                                           ^~~~~~~~~~~~~~~
"""

TEMPLATE_ANSWER = """long long sumOfList(const vector<long long>& numbers) {
    vector<pair<int,int>> v; sort(v.begin(), v.end(), [](int a, int b) { return a < b; });
    return 0;
}
"""
TEMPLATE_OUTPUT = """In file included from /usr/include/c++/12/bits/stl_algobase.h:71,
                 from /usr/include/c++/12/algorithm:60,
                 from /tmp/pchtest/interviewprep_prelude.h:1:
/usr/include/c++/12/bits/predefined_ops.h: In instantiation of ‘constexpr bool __gnu_cxx::__ops::_Iter_comp_iter<_Compare>::operator()(_Iterator1, _Iterator2) [with _Compare = sumOfList(const std::vector<long long int>&)::<lambda(int, int)>]’:
/usr/include/c++/12/bits/stl_algo.h:1809:14:   required from ‘void std::__insertion_sort(_RandomAccessIterator, _RandomAccessIterator, _Compare)’
/usr/include/c++/12/bits/stl_algo.h:4853:18:   required from ‘void std::sort(_RAIter, _RAIter, _Compare)’
answer.cpp:2:34:   required from here
/usr/include/c++/12/bits/predefined_ops.h:158:30: error: no match for call to ‘(sumOfList(const std::vector<long long int>&)::<lambda(int, int)>) (std::pair<int, int>&, std::pair<int, int>&)’
  158 |         { return bool(_M_comp(*__it1, *__it2)); }
      |                       ~~~~~~~^~~~~~~~~~~~~~~~
"""

WRONG_SIGNATURE_OUTPUT = """harness.cpp: In instantiation of ‘void ip_harness_::start() [with auto Call = ip_call_]’:
harness.cpp:145:45:   required from here
harness.cpp:124:25: error: static assertion failed: answer.cpp must define `long long sumOfList(const std::vector<long long>& numbers)`
  124 |     static_assert(!std::is_same_v<Got, Missing>, "answer.cpp must define `long long sumOfList(const std::vector<long long>& numbers)`");
      |                    ~~~~~^~~~~~~~~~~~~~~~~~~~~~~
harness.cpp:124:25: note: ‘!(bool)std::is_same_v<ip_harness_::Missing, ip_harness_::Missing>’ evaluates to false
"""

UNCLOSED_ANSWER = """long long sumOfList(const vector<long long>& numbers) {
    long long total = 0;
    for (auto n : numbers) { total += n;
    return total;
}
"""
UNCLOSED_OUTPUT = """harness.cpp: In function ‘long long int sumOfList(const std::vector<long long int>&)’:
harness.cpp:144:51: error: a function-definition is not allowed here before ‘{’ token
  144 | static auto ip_call_(ip_harness_::Args& ip_args_) { return ::sumOfList(std::get<0>(ip_args_)); }  // answer.cpp must define `long long sumOfList(const std::vector<long long>& numbers)`
      |                                                   ^
harness.cpp:145:50: error: expected ‘}’ at end of input
  145 | signed main() { ip_harness_::start<ip_call_>(); }
      |                                                  ^
In file included from harness.cpp:141:
answer.cpp:1:55: note: to match this ‘{’
    1 | long long sumOfList(const vector<long long>& numbers) {
      |                                                       ^
"""

LINK_OUTPUT = """/tmp/box/ccZnsbDT.o:harness.cpp:function void ip_harness_::test<&(ip_call_(std::tuple<std::vector<long long, std::allocator<long long> > >&))>(ip_harness_::Reader&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&, ip_harness_::Timing&): error: undefined reference to 'sumOfList(std::vector<long long, std::allocator<long long> > const&)'
collect2: error: ld returned 1 exit status
"""


def test_compile_error_is_placed_on_the_answers_own_line_and_column():
    assert CPP.compile_error(SYNTAX_OUTPUT, SYNTAX_ANSWER) == ("expected ‘,’ or ‘;’ before ‘for’", 3, 5)


def test_compile_error_column_counts_characters_not_bytes():
    # g++ says byte 92; "é" before it is two bytes and one character.
    message, line, column = CPP.compile_error(UNICODE_OUTPUT, UNICODE_ANSWER)
    assert (message, line, column) == ("‘undefined_thing’ was not declared in this scope", 2, 91)
    assert UNICODE_ANSWER.splitlines()[1][column - 1 :].startswith("undefined_thing")


def test_compile_error_in_a_standard_header_is_placed_where_the_answer_used_it():
    message, line, column = CPP.compile_error(TEMPLATE_OUTPUT, TEMPLATE_ANSWER)
    assert message.startswith("no match for call to")
    assert (line, column) == (2, 34)


def test_compile_error_in_the_harness_states_the_expected_declaration():
    assert CPP.compile_error(WRONG_SIGNATURE_OUTPUT, "int sumOfList(vector<int>& v) { return 0; }\n") == (
        "answer.cpp must define `long long sumOfList(const std::vector<long long>& numbers)`", None, None,
    )  # fmt: skip


def test_compile_error_of_an_unclosed_brace_points_at_it():
    assert CPP.compile_error(UNCLOSED_OUTPUT, UNCLOSED_ANSWER) == ("this ‘{’ is never closed", 1, 55)


def test_compile_error_of_a_declared_but_undefined_function():
    message, line, column = CPP.compile_error(LINK_OUTPUT, "long long sumOfList(const vector<long long>&);\n")
    assert message.startswith("undefined reference to `sumOfList(")
    assert (line, column) == (None, None)


def test_crash_reason():
    assert CPP.crash_reason("terminate: std::bad_alloc: std::bad_alloc\n") == "memory"
    assert CPP.crash_reason("") is None
