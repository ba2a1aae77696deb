#include "log/log.h"

#include "common/error.h"
#include "common/job_event.h"
#include "common/named_values.h"

#include <array>
#include <atomic>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

namespace fulcrum::log {

namespace {

struct LevelName {
    Level level;
    std::string_view name, text;
    int priority; // sd-daemon's: journald's level for the line
    spdlog::level::level_enum spd;
};
constexpr std::array<LevelName, 4> kLevels { {
    { Level::Debug, "debug", "[DEBUG]", 7, spdlog::level::debug },
    { Level::Info, "info", "[INFO] ", 6, spdlog::level::info },
    { Level::Warning, "warning", "[WARN] ", 4, spdlog::level::warn },
    { Level::Error, "error", "[ERROR]", 3, spdlog::level::err },
} };
const LevelName& row_of(Level level)
{
    return kLevels[static_cast<std::size_t>(level)];
}

constexpr NameTable<Format, 2> kFormats { {
    { Format::Text, "text" },
    { Format::Json, "json" },
} };

// Standard error is the journal's stream: systemd names it in JOURNAL_STREAM ("DEV:INODE").
bool stderr_is_journal()
{
    const char* stream = std::getenv("JOURNAL_STREAM");
    struct stat st { };
    if (stream == nullptr || ::fstat(2, &st) != 0)
        return false;
    unsigned long long dev = 0, inode = 0;
    if (std::sscanf(stream, "%llu:%llu", &dev, &inode) != 2)
        return false;
    return dev == static_cast<unsigned long long>(st.st_dev) && inode == static_cast<unsigned long long>(st.st_ino);
}

// The length of the UTF-8 sequence at `text[i]`, or 0 when it is not one (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i)
{
    const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80)
        return 1;
    const std::size_t n = lead >= 0xc2 && lead <= 0xdf ? 2
        : lead >= 0xe0 && lead <= 0xef                 ? 3
        : lead >= 0xf0 && lead <= 0xf4                 ? 4
                                                       : 0;
    if (n == 0 || i + n > text.size())
        return 0;
    // The second byte's range narrows for E0, ED, F0 and F4 (RFC 3629, section 4).
    const unsigned char second = byte(i + 1);
    const unsigned char low = lead == 0xe0 ? 0xa0 : lead == 0xf0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xed ? 0x9f : lead == 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high)
        return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((byte(i + k) & 0xc0) != 0x80)
            return 0;
    return n;
}

// The code point of a valid sequence of length n at `text[i]`.
char32_t code_point(std::string_view text, std::size_t i, std::size_t n)
{
    const auto byte = [&](std::size_t at) { return static_cast<char32_t>(static_cast<unsigned char>(text[at])); };
    char32_t c = byte(i) & (n == 2 ? 0x1fu : n == 3 ? 0x0fu : 0x07u);
    for (std::size_t k = 1; k < n; ++k)
        c = (c << 6) | (byte(i + k) & 0x3fu);
    return c;
}

// What a terminal or a line splitter may act on though it is valid UTF-8: C1 controls (CSI
// U+009B starts an escape sequence, NEL U+0085 breaks a line), the Unicode line and
// paragraph separators, and the bidirectional overrides that reorder what a reader sees.
bool is_unsafe_code_point(char32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e)
        || (c >= 0x2066 && c <= 0x2069);
}

// Text as one line may hold it: control characters as printable() writes them, and a byte
// that is no UTF-8 as \xNN (a JSON line must be UTF-8). `in_quotes` also escapes the quote
// and the backslash, for a quoted value of a text line.
std::string escaped(std::string_view text, bool controls, bool in_quotes)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_length(text, i);
        const auto b = static_cast<unsigned char>(text[i]);
        if (n == 0) {
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 0xfu];
        } else if (n > 1) {
            if (controls && is_unsafe_code_point(code_point(text, i, n))) {
                char hex[16];
                std::snprintf(hex, sizeof hex, "\\u{%04x}", static_cast<unsigned>(code_point(text, i, n)));
                out += hex;
            } else {
                out.append(text.substr(i, n));
            }
        } else if (in_quotes && (b == '"' || b == '\\')) {
            out += '\\';
            out += static_cast<char>(b);
        } else if (controls && (b < 0x20 || b == 0x7f)) {
            out += printable(text.substr(i, 1));
        } else {
            out += static_cast<char>(b);
        }
        i += n == 0 ? 1 : n;
    }
    return out;
}
std::string safe(std::string_view text)
{
    return escaped(text, true, false);
}

// logfmt's rule: a value with a blank, a quote, an equals sign, a backslash or a character
// that must be escaped (or no value) is quoted, escaped as Go's strconv.Quote would.
void append_text_value(std::string& line, std::string_view value)
{
    const std::string plain = safe(value);
    if (!value.empty() && plain == value && value.find_first_of(" \"=\\") == std::string_view::npos) {
        line += value;
        return;
    }
    line += '"';
    line += escaped(value, true, true);
    line += '"';
}

// Each line to a function (tests), written by the calling thread.
class FunctionSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    explicit FunctionSink(std::function<void(std::string_view)> to)
        : to_(std::move(to))
    {
    }

private:
    void sink_it_(const spdlog::details::log_msg& msg) override
    {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        to_(std::string_view(formatted.data(), formatted.size()));
    }
    void flush_() override { }
    std::function<void(std::string_view)> to_;
};

struct State {
    std::string program;
    Format format = Format::Text;
    bool journal = false;
    std::shared_ptr<spdlog::details::thread_pool> pool;
    std::shared_ptr<spdlog::logger> logger;
};

std::shared_ptr<const State> make_state(Settings settings)
{
    auto state = std::make_shared<State>();
    state->program = safe(settings.program);
    state->format = settings.format;
    state->journal = !settings.to && stderr_is_journal();
    spdlog::sink_ptr sink;
    if (settings.to)
        sink = std::make_shared<FunctionSink>(std::move(settings.to));
    else
        sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    // The time is spdlog's (it formats it once a second); the rest of the line is ours.
    const std::string pattern = state->journal ? "%v"
        : state->format == Format::Json        ? R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ",%v)"
        : settings.time                        ? "%Y-%m-%dT%H:%M:%S.%eZ %v"
                                               : "%v";
    const bool to_function = std::dynamic_pointer_cast<FunctionSink>(sink) != nullptr;
    sink->set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern, spdlog::pattern_time_type::utc,
        to_function ? std::string() : std::string(spdlog::details::os::default_eol)));
    if (settings.background && !to_function) {
        state->pool = std::make_shared<spdlog::details::thread_pool>(8192, 1);
        state->logger = std::make_shared<spdlog::async_logger>(
            state->program, sink, state->pool, spdlog::async_overflow_policy::overrun_oldest);
    } else {
        state->logger = std::make_shared<spdlog::logger>(state->program, sink);
    }
    state->logger->set_level(spdlog::level::trace); // the level is ours: enabled()
    state->logger->flush_on(spdlog::level::trace);
    return state;
}

std::atomic<std::shared_ptr<const State>>& current()
{
    static std::atomic<std::shared_ptr<const State>> state { make_state({}) };
    return state;
}
std::atomic<int> g_level { static_cast<int>(Level::Info) };

} // namespace

std::string_view to_string(Level level)
{
    return row_of(level).name;
}

std::optional<Level> parse_level(std::string_view name)
{
    for (const LevelName& l : kLevels)
        if (l.name == name)
            return l.level;
    return std::nullopt;
}

std::string_view to_string(Format format)
{
    return name_of(kFormats, format);
}

std::optional<Format> parse_format(std::string_view name)
{
    return value_named(kFormats, name);
}

Level level_option(std::string_view option, std::string_view value)
{
    if (const auto level = parse_level(value))
        return *level;
    throw InputError(
        std::string(option), "", std::string("expected ") + kLevelNames + ", got '" + printable(value) + "'");
}

Format format_option(std::string_view option, std::string_view value)
{
    if (const auto format = parse_format(value))
        return *format;
    throw InputError(
        std::string(option), "", std::string("expected ") + kFormatNames + ", got '" + printable(value) + "'");
}

std::string Field::real(double v)
{
    return exact_number(v);
}

void setup(Settings settings)
{
    g_level = static_cast<int>(settings.level);
    auto state = make_state(std::move(settings));
    const auto before = current().exchange(std::move(state));
    if (before && before->pool)
        before->logger->flush();
}

void shutdown()
{
    g_level = static_cast<int>(Level::Info);
    const auto before = current().exchange(make_state({}));
    // The writer thread ends with its pool, after what is queued is written.
    if (before)
        before->logger->flush();
}

std::uint64_t dropped()
{
    const auto state = current().load();
    return state && state->pool ? state->pool->overrun_counter() : 0;
}

bool enabled(Level level)
{
    return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view message, std::initializer_list<Field> fields)
{
    if (!enabled(level))
        return;
    const auto state = current().load();
    const LevelName& l = row_of(level);
    std::string line;
    if (state->format == Format::Json) {
        // Written member by member: numbers as their shortest text (Boost.JSON would write
        // 0.25 as 2.5E-1), strings escaped by Boost.JSON. The pattern opened the object
        // with the time; for the journal, which keeps the time itself, the priority opens it.
        const auto quoted = [](std::string_view text) {
            return boost::json::serialize(boost::json::value(boost::json::string_view(text.data(), text.size())));
        };
        if (state->journal)
            line.append("<").append(std::to_string(l.priority)).append(">{");
        line.append("\"level\":").append(quoted(l.name));
        line.append(",\"program\":").append(quoted(state->program));
        line.append(",\"message\":").append(quoted(escaped(message, false, false)));
        for (const Field& f : fields) {
            if (f.kind == Field::Kind::Text && f.value.empty())
                continue;
            // A field never hides the line's own members.
            const bool own = f.key == "time" || f.key == "level" || f.key == "program" || f.key == "message";
            line.append(",").append(quoted((own ? "field_" : "") + std::string(f.key))).append(":");
            const bool bare = f.kind == Field::Kind::Integer || f.kind == Field::Kind::Truth
                || (f.kind == Field::Kind::Real && std::isfinite(std::strtod(f.value.c_str(), nullptr)));
            // Text (JSON escapes what it must), and a number JSON cannot write (inf, nan), quoted.
            line.append(bare ? f.value : quoted(escaped(f.value, false, false)));
        }
        line.append("}");
    } else {
        if (state->journal)
            line = "<" + std::to_string(l.priority) + ">";
        else
            line.append(l.text).append(" ").append(state->program).append(": ");
        line += safe(message);
        const char* separator = ": ";
        for (const Field& f : fields) {
            if (f.kind == Field::Kind::Text && f.value.empty())
                continue; // none: left out, in JSON too
            line.append(separator).append(f.key).append("=");
            append_text_value(line, f.value);
            separator = " ";
        }
    }
    state->logger->log(l.spd, spdlog::string_view_t(line.data(), line.size()));
}

} // namespace fulcrum::log
