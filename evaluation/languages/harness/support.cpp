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

constexpr std::size_t EXCERPT_CHARS = @EXCERPT_CHARS@;
constexpr long PRINT_LIMIT_BYTES = @PRINT_LIMIT@;
constexpr std::size_t VALUE_LIMIT_BYTES = @VALUE_LIMIT@;

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
                message = "the return value is larger than @VALUE_LIMIT_MIB@ MiB";
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
