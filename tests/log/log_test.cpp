// The log's lines (backend/log): both formats, the journal's priorities, levels, and a
// client's text that tries to forge a line or break the JSON.

#include "common/error.h"
#include "log/log.h"

#include <boost/json.hpp>
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace fulcrum;
namespace json = boost::json;

namespace {

class LogLines : public ::testing::Test {
protected:
    void use(log::Format format, log::Level level = log::Level::Info)
    {
        log::setup({ .program = "fulcrumd",
            .level = level,
            .format = format,
            .background = false,
            .time = true,
            .to = [this](std::string_view line) { lines.emplace_back(line); } });
    }
    void TearDown() override { log::shutdown(); }
    std::vector<std::string> lines;
};

TEST_F(LogLines, TextIsTimeLevelProgramMessageAndFields)
{
    use(log::Format::Text);
    log::info("connection opened", { { "peer", "127.0.0.1:4000" }, { "client", 7 }, { "seconds", 0.25 } });
    log::warning("command refused", { { "reason", "there is no job 7" }, { "actor", "" } });
    ASSERT_EQ(lines.size(), 2u);
    // 2026-11-27T23:10:00.123Z [INFO]  fulcrumd: connection opened: peer=127.0.0.1:4000 client=7 seconds=0.25
    EXPECT_EQ(lines[0][10], 'T');
    EXPECT_EQ(lines[0].substr(23), "Z [INFO]  fulcrumd: connection opened: peer=127.0.0.1:4000 client=7 seconds=0.25");
    // A value with a blank is quoted; an empty one is left out.
    EXPECT_EQ(lines[1].substr(25), "[WARN]  fulcrumd: command refused: reason=\"there is no job 7\"");
}

TEST_F(LogLines, JsonIsOneObjectALineWithTypedFields)
{
    use(log::Format::Json);
    log::error("internal error", { { "job", 3 }, { "share", 0.5 }, { "limited", true }, { "reason", "disk full" } });
    ASSERT_EQ(lines.size(), 1u);
    const json::object o = json::parse(lines[0]).as_object();
    EXPECT_EQ(o.at("level").as_string(), "error");
    EXPECT_EQ(o.at("program").as_string(), "fulcrumd");
    EXPECT_EQ(o.at("message").as_string(), "internal error");
    EXPECT_EQ(o.at("job").as_int64(), 3);
    EXPECT_EQ(o.at("share").as_double(), 0.5);
    EXPECT_EQ(o.at("limited").as_bool(), true);
    EXPECT_EQ(o.at("reason").as_string(), "disk full");
    EXPECT_EQ(o.at("time").as_string().size(), 24u);
    EXPECT_EQ(lines[0].find("{\"time\":"), 0u) << "the time first, as log shippers look for it";
}

// A client's text (a job's name, a User-Agent) with a line break, an escape sequence, a quote
// and bytes that are no UTF-8: one line in text, valid JSON holding the same text otherwise.
TEST_F(LogLines, AClientsTextCannotForgeALineOrBreakTheJson)
{
    const std::string hostile = std::string("x\nfulcrumd: job 99 finished\x1b[2K \"q\" \\ ") + "\xff\xc3";
    use(log::Format::Text);
    log::info("job state", { { "name", hostile } });
    log::info(hostile);
    use(log::Format::Json);
    log::info("job state", { { "name", hostile } });
    ASSERT_EQ(lines.size(), 3u);
    for (const std::string& line : lines) {
        EXPECT_EQ(line.find('\n'), std::string::npos) << line;
        EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    }
    EXPECT_NE(lines[0].find(R"(name="x\nfulcrumd: job 99 finished\x1b[2K \"q\" \\ \xff\xc3")"), std::string::npos)
        << lines[0];
    EXPECT_NE(lines[1].find(R"(fulcrumd: x\nfulcrumd: job 99 finished\x1b[2K "q" \ \xff\xc3)"), std::string::npos)
        << lines[1];
    const json::object o = json::parse(lines[2]).as_object();
    EXPECT_EQ(o.at("name").as_string(), "x\nfulcrumd: job 99 finished\x1b[2K \"q\" \\ \\xff\\xc3");
}

// Bytes a lenient decoder takes for UTF-8 (a surrogate, an overlong line feed, a code point
// past U+10FFFF) are written as \xNN, so a strict JSON reader takes every line; valid
// characters a terminal or a line splitter acts on (CSI, NEL, the line separator, a bidi
// override) are escaped in text.
TEST_F(LogLines, NoByteALenientDecoderAcceptsOrATerminalActsOnGetsThrough)
{
    const std::string hostile = std::string("a\xed\xa0\x80"
                                            "b\xc0\x8a")
        + "c\xf4\x90\x80\x80"
          "d"
        + "\xc2\x9b[2K" + "\xc2\x85" + "\xe2\x80\xa8" + "\xe2\x80\xae" + "ok \xc3\xa9";
    use(log::Format::Json);
    log::info("request refused", { { "target", hostile } });
    use(log::Format::Text);
    log::info("request refused", { { "target", hostile } });
    ASSERT_EQ(lines.size(), 2u);
    const json::object o = json::parse(lines[0]).as_object(); // Boost.JSON refuses invalid UTF-8
    EXPECT_EQ(o.at("target").as_string(),
        "a\\xed\\xa0\\x80b\\xc0\\x8ac\\xf4\\x90\\x80\\x80d\xc2\x9b[2K\xc2\x85\xe2\x80\xa8\xe2\x80\xaeok \xc3\xa9");
    EXPECT_NE(lines[1].find(R"(target="a\xed\xa0\x80b\xc0\x8ac\xf4\x90\x80\x80d\u{009b}[2K\u{0085}\u{2028}\u{202e}ok )"
                            "\xc3\xa9\""),
        std::string::npos)
        << lines[1];
}

TEST_F(LogLines, ALevelBelowTheSettingIsNotWritten)
{
    use(log::Format::Text, log::Level::Warning);
    log::debug("link shared");
    log::info("connection opened");
    log::warning("source limited");
    log::error("internal error");
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("[WARN]  fulcrumd: source limited"), std::string::npos);
    EXPECT_NE(lines[1].find("[ERROR] fulcrumd: internal error"), std::string::npos);
    EXPECT_FALSE(log::enabled(log::Level::Info));
}

// Under systemd (JOURNAL_STREAM names standard error) a text line carries its sd-daemon
// priority instead of the time, so journalctl shows and filters the levels.
TEST(LogJournal, UnderSystemdTextLinesCarryTheirPriority)
{
    ::testing::internal::CaptureStderr();
    struct stat st { };
    ASSERT_EQ(::fstat(2, &st), 0);
    const std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
    log::Settings journal;
    journal.program = "fulcrumd";
    log::setup(journal);
    log::warning("source limited", { { "source", "10.0.0.9" } });
    log::info("connection opened");
    journal.format = log::Format::Json;
    log::setup(journal);
    log::error("internal error", { { "job", 3 } });
    log::shutdown();
    ::unsetenv("JOURNAL_STREAM");
    const std::string written = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(written,
        "<4>source limited: source=10.0.0.9\n<6>connection opened\n"
        "<3>{\"level\":\"error\",\"program\":\"fulcrumd\",\"message\":\"internal error\",\"job\":3}\n");
}

TEST(LogOptions, LevelsAndFormatsAreReadByName)
{
    EXPECT_EQ(log::level_option("--log-level", "debug"), log::Level::Debug);
    EXPECT_EQ(log::level_option("--log-level", "warning"), log::Level::Warning);
    EXPECT_EQ(log::format_option("--log-format", "json"), log::Format::Json);
    try {
        log::level_option("--log-level", "loud");
        FAIL() << "a level it has not";
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), "--log-level");
        EXPECT_NE(std::string(e.reason()).find("debug, info, warning or error, got 'loud'"), std::string::npos);
    }
    EXPECT_THROW(log::format_option("--log-format", "xml"), InputError);
    for (const log::Level l : { log::Level::Debug, log::Level::Info, log::Level::Warning, log::Level::Error })
        EXPECT_EQ(log::parse_level(log::to_string(l)), l);
}

} // namespace
