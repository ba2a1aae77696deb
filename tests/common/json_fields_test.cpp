// The one JSON field reader: every error names the field by its full path and says what
// was expected and what came; files reject unknown keys, listing the known ones.
#include "common/json_fields.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

// The error `read` raises over `text`, as "code path: reason".
template <class Read> std::string refusal(const std::string& text, Read read)
{
    try {
        const json::value v = parse_json_text(text);
        read(JsonFields(v, "job"));
    } catch (const JsonFieldError& e) {
        return e.code() + " " + e.path() + ": " + e.reason();
    }
    return "accepted";
}

} // namespace

TEST(JsonFields, RequiredFieldsNameTheirPathAndWhatWasExpected)
{
    const auto speed = [](const JsonFields& f) { f.number("speed", 0, 1e9); };
    EXPECT_EQ(refusal("{}", speed), "missing-field job.speed: is required (a number)");
    EXPECT_EQ(refusal(R"({"speed": "fast"})", speed), "wrong-type job.speed: expected a number, got a string");
    EXPECT_EQ(refusal(R"({"speed": -1})", speed), "illegal-value job.speed: is -1, expected a number in [0, 1e+09]");
    EXPECT_EQ(refusal(R"({"speed": 5})", speed), "accepted");

    const auto batches = [](const JsonFields& f) { f.integers<std::int32_t>("batches", 1); };
    EXPECT_EQ(refusal(R"({"batches": [4, 2.5]})", batches),
        "wrong-type job.batches[1]: expected a whole number, got a number");
    EXPECT_EQ(
        refusal(R"({"batches": [4, 0]})", batches), "illegal-value job.batches[1]: is 0, expected 1 to 2147483647");

    const auto worker = [](const JsonFields& f) {
        const json::array& workers = f.array("workers");
        f.element("workers", 0, workers[0]).string("name", "a worker's name");
    };
    EXPECT_EQ(refusal(R"({"workers": [{"name": 3}]})", worker),
        "wrong-type job.workers[0].name: expected a worker's name, got a number");
}

TEST(JsonFields, OptionalFieldsTakeTheirFallbackButStillCheckWhatIsGiven)
{
    const json::value v = parse_json_text(R"({"pace": 4, "mode": "paced", "note": null})");
    const JsonFields f(v);
    EXPECT_EQ(f.number_or("pace", 10, 0.001, 1e6), 4);
    EXPECT_EQ(f.number_or("missing", 10, 0.001, 1e6), 10);
    EXPECT_EQ(f.string_or("mode", "virtual", { "virtual", "paced", "real" }), "paced");
    EXPECT_EQ(f.string_or("note", "none"), "none") << "null reads as absent";
    EXPECT_EQ(refusal(R"({"mode": "fast"})",
                  [](const JsonFields& g) {
                      g.string_or("mode", "virtual", { "virtual", "paced", "real" });
                  }),
        "illegal-value job.mode: is 'fast', expected one of: virtual, paced, real");
    EXPECT_EQ(refusal(R"({"mode": 1})", [](const JsonFields& g) { g.boolean_or("mode", false); }),
        "wrong-type job.mode: expected true or false, got a number");
}

TEST(JsonFields, AFileRejectsAKeyNothingReadAndListsTheKnownOnes)
{
    const auto read = [](const JsonFields& f) {
        f.number_or("speed", 1, 0, 10);
        f.string_or("name", "");
        f.reject_unknown();
    };
    EXPECT_EQ(
        refusal(R"({"speed": 2, "sped": 3})", read), "unknown-field job.sped: unknown field (expected name, speed)");
    EXPECT_EQ(refusal(R"({"speed": 2})", read), "accepted");
}

TEST(JsonFields, MalformedTextIsLocatedByLineAndColumn)
{
    try {
        parse_json_text("{\n  \"a\": 1,\n  \"b\": }\n");
        FAIL() << "malformed JSON was accepted";
    } catch (const JsonFieldError& e) {
        EXPECT_EQ(e.code(), "malformed-json");
        EXPECT_EQ(e.path(), "line 3, column 8");
    }
    EXPECT_NO_THROW(parse_json_text("{ // a comment people leave\n \"a\": [1, 2,], }"));
}
