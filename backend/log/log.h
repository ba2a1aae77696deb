#pragma once

// The programs' own story (fulcrumd's connections, refusals, commands, jobs and scheduler
// decisions; fulcrum-worker's and fulcrumctl's diagnostics), one line each on standard
// error, through spdlog. A line is a short fixed message and named fields:
//
//   text:    2026-11-27T23:10:00.123Z [INFO]  fulcrumd: connection opened: peer=127.0.0.1:40312 role=operator
//   journal: <6>connection opened: peer=127.0.0.1:40312 role=operator   (systemd shows the level)
//   json:    {"time":"2026-11-27T23:10:00.123Z","level":"info","program":"fulcrumd",
//             "message":"connection opened","peer":"127.0.0.1:40312","role":"operator"}
//
// When standard error is the journal's stream (systemd sets JOURNAL_STREAM to it), a line
// begins with its sd-daemon priority instead of the time, in either format. A client's text (a job's name,
// a program's name) is escaped in both formats, so it cannot forge a line. spdlog's headers
// stay in log.cpp.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace fulcrum::log {

enum class Level : std::uint8_t { Debug, Info, Warning, Error };
enum class Format : std::uint8_t { Text, Json };

std::string_view to_string(Level level);
std::optional<Level> parse_level(std::string_view name);
std::string_view to_string(Format format);
std::optional<Format> parse_format(std::string_view name);
inline constexpr const char* kLevelNames = "debug, info, warning or error";
inline constexpr const char* kFormatNames = "text or json";
// The value of a program's --log-level or --log-format (or a config file's field, `option`
// naming it). Throws InputError naming the option and what it accepts.
Level level_option(std::string_view option, std::string_view value);
Format format_option(std::string_view option, std::string_view value);

// One named value of a line: text, or a number or a truth (written bare in JSON).
struct Field {
    enum class Kind : std::uint8_t { Text, Integer, Real, Truth };
    Field(std::string_view k, std::string_view v)
        : key(k)
        , value(v)
    {
    }
    Field(std::string_view k, const std::string& v)
        : Field(k, std::string_view(v))
    {
    }
    Field(std::string_view k, const char* v)
        : Field(k, std::string_view(v))
    {
    }
    template <class N>
    requires(std::is_integral_v<N> && !std::is_same_v<N, bool>) Field(std::string_view k, N v)
        : key(k)
        , value(std::to_string(v))
        , kind(Kind::Integer)
    {
    }
    template <class N>
    requires std::is_floating_point_v<N> Field(std::string_view k, N v)
        : key(k)
        , value(real(static_cast<double>(v)))
        , kind(Kind::Real)
    {
    }
    // A number that may be missing: left out of the line when it is.
    template <class N>
    requires std::is_integral_v<N> Field(std::string_view k, const std::optional<N>& v)
        : key(k)
        , value(v ? std::to_string(*v) : std::string())
        , kind(v ? Kind::Integer : Kind::Text)
    {
    }
    Field(std::string_view k, bool v)
        : key(k)
        , value(v ? "true" : "false")
        , kind(Kind::Truth)
    {
    }

    std::string_view key;
    std::string value; // as text shows it
    Kind kind = Kind::Text;

private:
    static std::string real(double v); // the shortest text that reads back as v
};

struct Settings {
    std::string program = "fulcrum";
    Level level = Level::Info;
    Format format = Format::Text;
    // Lines are handed to a writer thread (fulcrumd: an I/O thread never waits for standard
    // error; when it cannot keep up the oldest lines waiting are dropped and counted).
    bool background = false;
    // Text lines begin with the time (UTC); a command-line tool's errors need none.
    bool time = true;
    // Each line here instead of standard error (tests), written at once.
    std::function<void(std::string_view line)> to;
};

// Replaces the logger (the last setup wins). Before any setup, lines go to standard error as
// text at info, from "fulcrum".
void setup(Settings settings);
// Writes what is waiting and ends the writer thread; lines after it go to standard error
// directly. Call before the program returns from main.
void shutdown();
// The lines the writer thread dropped because standard error could not keep up.
std::uint64_t dropped();

bool enabled(Level level);
void write(Level level, std::string_view message, std::initializer_list<Field> fields = {});
inline void debug(std::string_view message, std::initializer_list<Field> fields = {})
{
    if (enabled(Level::Debug))
        write(Level::Debug, message, fields);
}
inline void info(std::string_view message, std::initializer_list<Field> fields = {})
{
    write(Level::Info, message, fields);
}
inline void warning(std::string_view message, std::initializer_list<Field> fields = {})
{
    write(Level::Warning, message, fields);
}
inline void error(std::string_view message, std::initializer_list<Field> fields = {})
{
    write(Level::Error, message, fields);
}

// Shuts the logger down when it leaves its scope (main's), whichever way main returns.
class Session {
public:
    explicit Session(Settings settings) { setup(std::move(settings)); }
    ~Session() { shutdown(); }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
};

} // namespace fulcrum::log
