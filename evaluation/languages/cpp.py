"""C++ (g++, C++17): the answer is `answer.cpp`, included by a harness generated from the signature.

`harness.cpp` is: the common standard headers (`PRELUDE_HEADERS`), `using namespace std;`,
the harness's machinery (reading the tests, writing JSON, capturing output), then
`#include "answer.cpp"`, then a few lines that call the answer. g++ therefore names the
candidate's file and lines in its errors, and nothing the answer `#define`s can break the
machinery, which comes before it. Everything is linked statically, so the box runs one file
and needs no dynamic loader or shared library.

An answer that does not declare the function as `entry_point` says (`long long` where `int`
is declared, a `std::vector` of the declared element type, ...) fails a `static_assert` in
the harness whose text is that declaration; `compile_error` reports it without a line.

Compile cost (sum-of-list, -O2): parsing the prelude's headers and generating the harness's
fixed part are most of it. When `prebuilt_dir` holds the prelude precompiled and the fixed
part compiled (`prebuild_files`, `prebuild_argvs`), a compile does neither.
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.types import Signature, Type, camel

PROGRAM = "program"
HARNESS_FILE = "harness.cpp"
SUPPORT_SOURCE = "interviewprep_support.cpp"
SUPPORT_OBJECT = "interviewprep_support.o"
PRELUDE_NAME = "interviewprep_prelude.h"
# Same flags for the precompiled prelude and every compile: g++ ignores a PCH built with others.
CXXFLAGS = ("-std=c++17", "-O2")
# The headers an interview answer commonly needs, without <bits/stdc++.h> (twice the compile
# time). <csignal>, <thread> and <random> are left out: each costs compile time, and
# <csignal> declares POSIX's read, write, link ... at global scope, where a global of the
# answer's own could collide with them. <charconv>, <chrono> and <cxxabi.h> the harness needs.
PRELUDE_HEADERS = (
    "algorithm", "array", "bitset", "cassert", "cctype", "charconv", "chrono", "climits",
    "cmath", "cstdint", "cstdio", "cstdlib", "cstring", "cxxabi.h", "deque", "functional",
    "iostream", "iterator", "limits", "list", "map", "memory", "numeric", "optional", "queue",
    "set", "sstream", "stack", "stdexcept", "string", "string_view", "tuple", "unordered_map",
    "unordered_set", "utility", "vector",
)  # fmt: skip
_SCALARS = {"int": "long long", "float": "double", "string": "std::string", "bool": "bool"}
MUST_DEFINE = "answer.cpp must define "
# g++ diagnostics: "file:line:col: error: message" ("fatal error" for a missing #include).
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<level>fatal error|error): (?P<msg>.*)$"
)
_LOCATION = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s")
_UNCLOSED = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): note: to match this (?P<what>.+)$", re.MULTILINE
)
_UNDEFINED = re.compile(r"undefined reference to [`'](?P<what>[^'\n]+)'")


def cpp_type(kind: Type) -> str:
    if kind.kind == "list":
        return f"std::vector<{cpp_type(kind.item)}>"  # type: ignore[arg-type]
    if kind.kind == "map":
        return f"std::map<std::string, {cpp_type(kind.item)}>"  # type: ignore[arg-type]
    if kind.kind == "optional":
        return f"std::optional<{cpp_type(kind.item)}>"  # type: ignore[arg-type]
    return _SCALARS[kind.kind]


def cpp_parameter(kind: Type) -> str:
    """Scalars (string included) by value, containers by const reference."""
    return cpp_type(kind) if kind.kind in _SCALARS else f"const {cpp_type(kind)}&"


def prelude_header() -> str:
    return "".join(f"#include <{header}>\n" for header in PRELUDE_HEADERS)


# The harness's fixed part: what `harness.cpp` (and the answer) may call of it. In namespace
# ip_harness_, with only qualified std:: names, so the answer's own globals and `using
# namespace std;` change nothing in it.
SUPPORT_API = r"""
namespace ip_harness_ {
struct Reader {
    std::string text;
    std::size_t at = 0;
    std::string_view token();
    long long integer();
};
void read(Reader& in, long long& value);
void read(Reader& in, double& value);
void read(Reader& in, bool& value);
void read(Reader& in, std::string& value);

void write(std::string& out, long long value);
void write(std::string& out, double value);
void write(std::string& out, bool value);
void write(std::string& out, const std::string& value);  // throws BadValue for invalid UTF-8

struct BadValue {
    std::string why;
};
struct Missing {};  // what the fallback `entry(...)` returns: the answer has no such function

using Clock = std::chrono::steady_clock;
struct Timing {
    Clock::time_point started;
    bool running = false;
    double ms = 0;
};
// Reads one test's arguments from `in`, calls the answer, writes its value as JSON to `value`.
using Test = void (*)(Reader& in, std::string& value, Timing& timing);

void setup();  // before the answer's static initialisers: see `Setup` in harness.cpp
[[noreturn]] void run(Test test);
}  // namespace ip_harness_
"""

# The fixed part's code: compiled once per worker into support.o when `prebuilt_dir` is set,
# else part of every harness.cpp.
SUPPORT_CODE = r"""
namespace ip_harness_ {
// POSIX calls under private names (asm labels of the C library's symbols; 64-bit Linux), so
// the answer's global namespace gains no read, write, dup ... for its globals to collide with.
int sys_dup(int) __asm__("dup");
int sys_dup2(int, int) __asm__("dup2");
int sys_close(int) __asm__("close");
long sys_read(int, void*, unsigned long) __asm__("read");
long sys_write(int, const void*, unsigned long) __asm__("write");
long sys_pread(int, void*, unsigned long, long) __asm__("pread");
int sys_ftruncate(int, long) __asm__("ftruncate");
long sys_lseek(int, long, int) __asm__("lseek");
[[noreturn]] void sys_exit(int) __asm__("_exit");
using Handler = void (*)(int);
Handler sys_signal(int, Handler) __asm__("signal");
constexpr int SIGNAL_XFSZ = 25;  // the same on x86_64 and aarch64
constexpr int SEEK_FROM_START = 0, SEEK_FROM_END = 2;

constexpr std::size_t EXCERPT_CHARS = 1024;
constexpr long PRINT_LIMIT_BYTES = 1L << 20;
constexpr std::size_t VALUE_LIMIT_BYTES = 1 << 20;

int events_fd = -1;   // the result channel: fd 1 as the harness found it
int stderr_fd = -1;   // fd 2 as found, for last words when the process dies
int stdin_fd = -1;    // the tests arrive here; fd 0 itself is closed for the answer
int printed_fd = -1;  // what the answer prints (fds 1 and 2 point here), emptied per test
bool loaded = false;

void put(int fd, const std::string& text) {
    const char* data = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        long done = sys_write(fd, data, left);
        if (done <= 0) return;
        data += done;
        left -= static_cast<std::size_t>(done);
    }
}

// ---- JSON ----

// The length of the valid UTF-8 sequence at s[i], or 0 if there is none.
std::size_t utf8_length(const std::string& s, std::size_t i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    unsigned long code = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (std::size_t k = 1; k < n; ++k) {
        unsigned char next = static_cast<unsigned char>(s[i + k]);
        if ((next >> 6) != 0x2) return 0;
        code = (code << 6) | (next & 0x3F);
    }
    static const unsigned long smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
    return n;
}

// `text` as a JSON string of at most `limit` characters. Invalid UTF-8 becomes U+FFFD when
// `lossy`, else makes the result empty (nullopt).
std::optional<std::string> quoted(const std::string& text, bool lossy, std::size_t limit) {
    std::string out = "\"";
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size() && chars < limit; ++chars) {
        std::size_t n = utf8_length(text, i);
        if (n == 0) {
            if (!lossy) return std::nullopt;
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            out += escaped;
        } else {
            out.append(text, i, n);
        }
        i += n;
    }
    return out + "\"";
}

std::string excerpt(const std::string& text) { return *quoted(text, true, EXCERPT_CHARS); }

void write(std::string& out, long long value) {
    char text[24];
    out.append(text, std::to_chars(text, text + sizeof text, value).ptr);
}

void write(std::string& out, double value) {
    if (std::isnan(value)) {
        out += "NaN";
    } else if (std::isinf(value)) {
        out += value > 0 ? "Infinity" : "-Infinity";
    } else {
        char text[32];
        char* end = std::to_chars(text, text + sizeof text, value).ptr;  // the shortest exact form
        out.append(text, end);
        if (std::find_if(text, end, [](char c) { return c == '.' || c == 'e'; }) == end) out += ".0";
    }
}

void write(std::string& out, bool value) { out += value ? "true" : "false"; }

void write(std::string& out, const std::string& value) {
    std::optional<std::string> text = quoted(value, false, std::string::npos);
    if (!text) throw BadValue{"returned a string that is not valid UTF-8"};
    out += *text;
}

// ---- the tests' arguments: tokens by declared type (evaluation/languages/types.py) ----

std::string_view Reader::token() {
    while (at < text.size() && text[at] == ' ') ++at;
    std::size_t start = at;
    while (at < text.size() && text[at] != ' ') ++at;
    return std::string_view(text).substr(start, at - start);
}

long long Reader::integer() {
    std::string_view t = token();
    long long value = 0;
    std::from_chars(t.data(), t.data() + t.size(), value);
    return value;
}

void read(Reader& in, long long& value) { value = in.integer(); }

void read(Reader& in, double& value) {
    std::string_view t = in.token();
    std::from_chars(t.data(), t.data() + t.size(), value);
}

void read(Reader& in, bool& value) { value = in.integer() != 0; }

void read(Reader& in, std::string& value) {
    std::string_view t = in.token();  // "x", then the hex of the UTF-8 bytes
    value.clear();
    value.reserve(t.size() / 2);
    for (std::size_t i = 1; i + 1 < t.size(); i += 2) {
        unsigned byte = 0;
        std::from_chars(t.data() + i, t.data() + i + 2, byte, 16);
        value += static_cast<char>(byte);
    }
}

// One line of the tests' stdin, or "" at its end.
std::string read_line() {
    static char buffer[1 << 16];
    static long have = 0, used = 0;
    std::string line;
    for (;;) {
        if (used == have) {
            have = sys_read(stdin_fd, buffer, sizeof buffer);
            used = 0;
            if (have <= 0) {
                have = 0;
                return line;
            }
        }
        char* start = buffer + used;
        char* end = static_cast<char*>(std::memchr(start, '\n', static_cast<std::size_t>(have - used)));
        line.append(start, end ? end : buffer + have);
        used = end ? end - buffer + 1 : have;
        if (end) return line;
    }
}

// ---- what the answer prints ----

// Flushes the answer's streams and returns (and forgets) what it printed since the last call;
// `size` gets its length in bytes (the file stops growing at RLIMIT_FSIZE).
std::string take_printed(long& size) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.clear();  // a write refused at the size limit leaves the stream failed
    std::cerr.clear();
    std::clearerr(stdout);
    std::clearerr(stderr);
    size = std::max(sys_lseek(printed_fd, 0, SEEK_FROM_END), 0L);
    std::string text(static_cast<std::size_t>(std::min<long>(size, 4 * EXCERPT_CHARS)), '\0');
    long got = text.empty() ? 0 : sys_pread(printed_fd, text.data(), text.size(), 0);
    text.resize(static_cast<std::size_t>(std::max(got, 0L)));
    sys_ftruncate(printed_fd, 0);
    sys_lseek(printed_fd, 0, SEEK_FROM_START);  // fds 1 and 2 share this offset (dup2)
    return text;
}

// ---- exceptions ----

std::string type_name(const char* mangled) {
    int status = 0;
    char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string text = status == 0 && name ? name : mangled;
    std::free(name);
    return text;
}

// "Type: message" for the exception being handled.
std::string describe_current() {
    try {
        throw;
    } catch (const std::exception& error) {
        return type_name(typeid(error).name()) + ": " + error.what();
    } catch (const char* text) {
        return std::string("const char*: ") + text;
    } catch (const std::string& text) {
        return "std::string: " + text;
    } catch (...) {
        std::type_info* type = abi::__cxa_current_exception_type();
        return "an exception of type " + (type ? type_name(type->name()) : std::string("unknown"));
    }
}

[[noreturn]] void on_terminate() {
    std::string why = std::current_exception() ? describe_current() : std::string("std::terminate was called");
    if (!loaded) {  // thrown by the answer's own static initialisation, before main
        put(events_fd, "{\"e\":\"load_error\",\"kind\":\"exception\",\"msg\":" + excerpt(why) + "}\n");
        sys_exit(1);
    }
    put(stderr_fd, "terminate: " + why + "\n");
    std::abort();
}

void setup() {
    events_fd = sys_dup(1);
    stderr_fd = sys_dup(2);
    stdin_fd = sys_dup(0);
    std::FILE* file = std::tmpfile();  // in /tmp, already unlinked
    if (events_fd < 0 || stderr_fd < 0 || stdin_fd < 0 || file == nullptr) {
        put(1, "{\"e\":\"setup_error\",\"msg\":\"cannot set up the capture of printed output\"}\n");
        sys_exit(3);
    }
    printed_fd = fileno(file);
    sys_dup2(printed_fd, 1);
    sys_dup2(printed_fd, 2);
    sys_close(0);  // the answer cannot read (or wait for) the tests
    sys_signal(SIGNAL_XFSZ, reinterpret_cast<Handler>(1));  // SIG_IGN: EFBIG at the size limit, not death
    std::set_terminate(on_terminate);
}

// ---- the tests ----

void run_line(Test test, Reader& in, long& index, long detailed, long& printed_total) {
    long count = in.integer();
    for (long n = 0; n < count; ++n, ++index) {
        long size = 0;
        take_printed(size);  // nothing printed before the call belongs to this test
        std::string status = "ok", value, message;
        Timing timing;
        try {
            test(in, value, timing);
            if (value.size() > VALUE_LIMIT_BYTES) {
                status = "output";
                message = "the return value is larger than 1 MiB";
            }
        } catch (const std::bad_alloc&) {
            status = "memory";
        } catch (const BadValue& bad) {
            status = "badvalue";
            message = bad.why;
        } catch (...) {
            status = "error";
            message = describe_current();
        }
        if (timing.running) {  // it threw: the call ran until now
            timing.ms = std::chrono::duration<double, std::milli>(Clock::now() - timing.started).count();
        }
        std::string printed = take_printed(size);
        printed_total += size;
        if (size > 0 && printed_total >= PRINT_LIMIT_BYTES) status = "output";
        char head[112];
        std::snprintf(head, sizeof head, "{\"e\":\"test\",\"i\":%ld,\"s\":\"%s\",\"t\":%.2f",
                      index, status.c_str(), timing.ms);
        std::string line = head;
        if (status == "ok") line += ",\"v\":" + value;
        if (index < detailed) {  // hidden tests report no output or message: the parent drops them
            line += ",\"o\":" + excerpt(printed);
            if (!message.empty()) line += ",\"msg\":" + excerpt(message);
        }
        put(events_fd, line + "}\n");
    }
}

void run(Test test) {
    loaded = true;
    long printed_total = 0;
    take_printed(printed_total);  // what the answer's static initialisers printed
    if (printed_total >= PRINT_LIMIT_BYTES) {
        put(events_fd, "{\"e\":\"load_error\",\"kind\":\"output\",\"msg\":\"printed more than the output limit\"}\n");
        sys_exit(0);
    }
    put(events_fd, "{\"e\":\"loaded\"}\n");
    long index = 0;
    Reader shown{read_line()};
    run_line(test, shown, index, 1L << 62, printed_total);
    long detailed = index;
    // The hidden tests come only once every shown one has reported (or not at all: EOF).
    Reader hidden{read_line()};
    sys_close(stdin_fd);
    if (!hidden.text.empty()) run_line(test, hidden, index, detailed, printed_total);
    put(events_fd, "{\"e\":\"done\"}\n");
    sys_exit(0);  // the answer's static destructors do not run
}
}  // namespace ip_harness_
"""

# The per-question part, before the answer: the declared types, containers read and written
# by overloads on those types, and the checks that the answer declares the function as asked.
# @RET@, @ARGS@, @DECLARATION@ and @NAME@ are filled in.
_TYPED = r"""
namespace ip_harness_ {
template <class T> void read(Reader& in, std::vector<T>& value);
template <class T> void read(Reader& in, std::map<std::string, T>& value);
template <class T> void read(Reader& in, std::optional<T>& value);
template <class T> void write(std::string& out, const std::vector<T>& value);
template <class T> void write(std::string& out, const std::map<std::string, T>& value);
template <class T> void write(std::string& out, const std::optional<T>& value);

template <class T> void read(Reader& in, std::vector<T>& value) {
    std::size_t count = static_cast<std::size_t>(in.integer());
    value.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        T item{};
        read(in, item);
        value.push_back(std::move(item));
    }
}

template <class T> void read(Reader& in, std::map<std::string, T>& value) {
    std::size_t count = static_cast<std::size_t>(in.integer());
    for (std::size_t i = 0; i < count; ++i) {
        std::string key;
        T item{};
        read(in, key);
        read(in, item);
        value.emplace_hint(value.end(), std::move(key), std::move(item));  // keys arrive sorted
    }
}

template <class T> void read(Reader& in, std::optional<T>& value) {
    if (in.integer() != 0) {
        T item{};
        read(in, item);
        value = std::move(item);
    }
}

template <class T> void write(std::string& out, const std::vector<T>& value) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ',';
        write(out, static_cast<const T&>(value[i]));  // the cast: std::vector<bool>'s items
    }
    out += ']';
}

template <class T> void write(std::string& out, const std::map<std::string, T>& value) {
    out += '{';
    for (const auto& item : value) {
        if (out.back() != '{') out += ',';
        write(out, item.first);
        out += ':';
        write(out, item.second);
    }
    out += '}';
}

template <class T> void write(std::string& out, const std::optional<T>& value) {
    if (value) write(out, *value);
    else out += "null";
}

// True when a function returning Got may stand for one declared to return Ret.
template <class Got, class Ret> constexpr bool fits = std::is_convertible_v<Got, Ret>;
template <class Got> constexpr bool fits<Got, long long> = std::is_integral_v<Got> && !std::is_same_v<Got, bool>;
template <class Got> constexpr bool fits<Got, double> = std::is_arithmetic_v<Got> && !std::is_same_v<Got, bool>;
template <class Got> constexpr bool fits<Got, bool> = std::is_same_v<Got, bool>;

using Ret = @RET@;
using Args = std::tuple<@ARGS@>;

template <auto Call> void test(Reader& in, std::string& value, Timing& timing) {
    Args args;
    std::apply([&in](auto&... arg) { (read(in, arg), ...); }, args);
    timing.started = Clock::now();
    timing.running = true;
    Ret result = Call(args);
    timing.running = false;
    timing.ms = std::chrono::duration<double, std::milli>(Clock::now() - timing.started).count();
    write(value, result);
}

template <auto Call> [[noreturn]] void start() {
    using Got = std::remove_cv_t<std::remove_reference_t<decltype(Call(std::declval<Args&>()))>>;
    static_assert(!std::is_same_v<Got, Missing>, "answer.cpp must define `@DECLARATION@`");
    static_assert(fits<Got, Ret>, "answer.cpp must define `@DECLARATION@` (its return type differs)");
    run(test<Call>);
}

// Runs setup() before the answer's own static initialisers (same file, defined earlier), so
// nothing they print reaches the result channel.
struct Setup {
    Setup() { setup(); }
} setup_first;
}  // namespace ip_harness_

// Chosen only when no function of the answer's takes the declared arguments.
template <class... A> ip_harness_::Missing @NAME@(const A&...);
"""

# After the answer: as little as possible, in words no common answer macro replaces
# (`signed main`, for answers that `#define int long long`).
_CALL = r"""
static auto ip_call_(ip_harness_::Args& ip_args_) { return ::@NAME@(@CALL_ARGS@); }  // @MUST@
signed main() { ip_harness_::start<ip_call_>(); }
"""


class Cpp(Language):
    id: ClassVar[str] = "cpp"
    name: ClassVar[str] = "C++"
    ace_mode: ClassVar[str] = "ace/mode/c_cpp"
    answer_file: ClassVar[str] = "answer.cpp"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/g++", "--version")
    fresh_process: ClassVar[bool] = True  # globals reset only in a new process: one per test

    cpu_factor: ClassVar[float] = 1.0
    cpu_extra_s: ClassVar[float] = 0.0
    memory_rlimit: ClassVar[str] = "as"
    memory_extra_mb: ClassVar[int] = 32  # the static binary itself, its stack and the tests' text
    compile_cpu_s: ClassVar[float] = 10.0
    compile_memory_mb: ClassVar[int] = 1024
    compile_processes: ClassVar[int] = 16

    def entry_point(self, signature: Signature) -> str:
        params = ", ".join(f"{cpp_parameter(p.type)} {camel(p.name)}" for p in signature.params)
        return f"{cpp_type(signature.returns)} {self.entry_name(signature)}({params})"

    def starter(self, signature: Signature) -> str:
        return f"{self.entry_point(signature)} {{\n    // {signature.summary}\n    return {{}};\n}}\n"

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        name = self.entry_name(signature)
        declaration = self.entry_point(signature)
        typed = (
            _TYPED.replace("@RET@", cpp_type(signature.returns))
            .replace("@ARGS@", ", ".join(cpp_type(p.type) for p in signature.params))
            .replace("@DECLARATION@", declaration)
            .replace("@NAME@", name)
        )
        call = (
            _CALL.replace("@MUST@", f"{MUST_DEFINE}`{declaration}`")
            .replace("@NAME@", name)
            .replace("@CALL_ARGS@", ", ".join(f"std::get<{n}>(ip_args_)" for n in range(len(signature.params))))
        )
        if self.prebuilt_dir:  # the prelude's .gch is found beside it; support.o is linked
            head = f"#include <{PRELUDE_NAME}>\nusing namespace std;\n{SUPPORT_API}"
        else:
            head = f"{prelude_header()}using namespace std;\n{SUPPORT_API}{SUPPORT_CODE}"
        harness = (
            f"// Generated by evaluation/languages/cpp.py: runs {name} from answer.cpp on the tests.\n"
            + head
            + typed
            + "\n// An answer's own main (to try it out) is renamed out of the way.\n"
            + "#define main ip_answer_main_\n"
            + '#include "answer.cpp"\n'
            + "#undef main\n"
            + call
        )
        return {self.answer_file: answer, HARNESS_FILE: harness}

    def compile_argv(self, box: str) -> list[str]:
        prebuilt = []
        if self.prebuilt_dir:
            prebuilt = ["-I", self.prebuilt_dir, os.path.join(self.prebuilt_dir, SUPPORT_OBJECT)]
        return [
            "/usr/bin/g++", *CXXFLAGS, "-pipe", "-static", "-fuse-ld=gold", "-w",
            "-fdiagnostics-column-unit=byte", "-fdiagnostics-color=never", "-fmax-errors=20",
            "-o", PROGRAM, HARNESS_FILE, *prebuilt,
        ]  # fmt: skip

    def compile_env(self, box: str) -> dict[str, str]:
        # The driver's temporary files (the object file) go to the box, not the small /tmp.
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": box, "TMPDIR": box}

    def executable(self, box: str) -> str:
        return os.path.realpath(os.path.join(box, PROGRAM))

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        return [self.executable(box)]

    def prebuild_files(self) -> dict[str, str]:
        """The files to write into the prebuilt directory before running `prebuild_argvs`."""
        return {
            PRELUDE_NAME: prelude_header(),
            SUPPORT_SOURCE: f"#include <{PRELUDE_NAME}>\n{SUPPORT_API}{SUPPORT_CODE}",
        }

    def prebuild_argvs(self, directory: str) -> list[list[str]]:
        """Commands to run in order (any working directory) once `prebuild_files` are in
        `directory`: the precompiled prelude, then the fixed part's object file."""
        header = os.path.join(directory, PRELUDE_NAME)
        return [
            ["/usr/bin/g++", *CXXFLAGS, "-x", "c++-header", "-o", header + ".gch", header],
            ["/usr/bin/g++", *CXXFLAGS, "-I", directory, "-c", "-o", os.path.join(directory, SUPPORT_OBJECT),
             os.path.join(directory, SUPPORT_SOURCE)],
        ]  # fmt: skip

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        lines = output.splitlines()
        answer_lines = re.split(r"\r\n|\r|\n", answer)  # g++'s line ends
        for position, text in enumerate(lines):
            match = _DIAGNOSTIC.match(text)
            if match is None:
                continue
            message = match.group("msg").strip()
            if os.path.basename(match.group("file")) == self.answer_file:
                return message, *self._place(match, answer_lines)
            # An error inside a standard header that the answer's code instantiated: the
            # "required from here" lines before it name the answer's own line.
            for before in reversed(lines[:position]):
                if _DIAGNOSTIC.match(before):
                    break
                place = _LOCATION.match(before)
                if place and os.path.basename(place.group("file")) == self.answer_file:
                    return message, *self._place(place, answer_lines)
            # The answer left a bracket open, so the harness's own code was read inside it.
            for note in _UNCLOSED.finditer(output):
                if os.path.basename(note.group("file")) == self.answer_file:
                    return f"this {note.group('what').strip()} is never closed", *self._place(note, answer_lines)
            if MUST_DEFINE in message:  # the harness's static_assert
                return message[message.index(MUST_DEFINE) :], None, None
            declared = output.find(MUST_DEFINE)  # the call's line, as g++ quotes it
            if declared >= 0:
                end = output.find("`", output.find("`", declared) + 1)
                return output[declared : end + 1] if end > declared else message, None, None
            return message, None, None
        undefined = _UNDEFINED.search(output)
        if undefined:
            return f"undefined reference to `{undefined.group('what')}` (declared but never defined?)", None, None
        text = [line.strip() for line in lines if line.strip()]
        return (text[0] if text else "the compiler failed without saying why"), None, None

    @staticmethod
    def _place(match: re.Match[str], answer_lines: list[str]) -> tuple[int | None, int | None]:
        """The line, and the column in characters (g++ counts bytes), in the answer's text."""
        line = int(match.group("line"))
        if not 1 <= line <= max(len(answer_lines), 1):
            return None, None
        column = match.group("col")
        if column is None:
            return line, None
        source = answer_lines[line - 1].encode("utf-8") if line <= len(answer_lines) else b""
        return line, len(source[: int(column) - 1].decode("utf-8", "replace")) + 1

    def crash_reason(self, stderr: str) -> str | None:
        return "memory" if "std::bad_alloc" in stderr else None
