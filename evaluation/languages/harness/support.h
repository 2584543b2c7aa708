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
